/**
 * The security headers in a real browser (src/http/security-headers.ts): an image a model's
 * answer points at is not fetched until the person opens it (then without a referrer); another
 * site cannot frame the app; an inline handler that got into the page would be refused; the API
 * explorer at /docs works under its own policy. Each against a loopback server the test starts,
 * which counts what reaches it. With E2E_SHOTS=<dir> the chat with such an answer is saved at
 * desktop and phone size, light and dark.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { checkScreen } from './checks.js';
import { createStandInModel } from './server.js';
import { cspViolations, expect, signIn, test } from './fixtures.js';

/** A 1×1 PNG. */
const PIXEL = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=', 'base64');

interface Remote {
  url: string;
  /** every request received: path and Referer */
  seen: Array<{ path: string; referer: string | undefined }>;
  /** the page that frames `target` */
  setFramed(target: string): void;
  close(): Promise<void>;
}

async function startRemote(): Promise<Remote> {
  const seen: Remote['seen'] = [];
  let framed = 'about:blank';
  const server = http.createServer((req, res) => {
    seen.push({ path: req.url ?? '', referer: req.headers.referer });
    if (req.url === '/frame.html') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(
        `<!doctype html><title>Another site</title><h1>Another site</h1><iframe title="framed" src="${framed}" onload="document.body.dataset.framed = 'loaded'" width="800" height="600"></iframe>`,
      );
      return;
    }
    res.writeHead(200, { 'content-type': 'image/png' });
    res.end(PIXEL);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    setFramed: (target) => (framed = target),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

let remote: Remote;
test.beforeAll(async () => {
  remote = await startRemote();
});
test.afterAll(async () => {
  await remote.close();
});
test.beforeEach(() => {
  remote.seen.length = 0;
});

test('an image in an answer is not fetched until the person opens it, and then without a referrer', async ({ page, atrium }) => {
  const model = await createStandInModel(atrium, `Images ${Date.now()}`);
  const ws = await atrium.api<{ id: string }>('POST', '/api/v1/workspaces', { name: 'Images', modelIds: [model.id] });
  atrium.standIn.set({
    reply: [
      'Here is the chart you asked for:',
      `![Quarterly revenue](${remote.url}/chart.png?markdown)`,
      `<img src="${remote.url}/chart.png?html" alt="">`,
      `<svg width="10" height="10"><image href="${remote.url}/chart.png?svg" width="10" height="10"></image></svg>`,
      `<video poster="${remote.url}/chart.png?poster"></video>`,
      'An inline image is fine: ![dot](data:image/png;base64,' + PIXEL.toString('base64') + ')',
    ].join('\n\n'),
  });
  const turn = await atrium.api<{ threadId: string }>('POST', `/api/v1/chat/${ws.id}/completions`, { prompt: 'Show me the revenue chart' });
  atrium.standIn.reset();

  await signIn(page);
  await page.goto(`/w/${ws.id}/t/${turn.threadId}`);
  const answer = page.getByRole('article', { name: 'Answer' });
  const link = answer.getByRole('link', { name: 'Image: Quarterly revenue (127.0.0.1)' });
  await expect(link).toHaveAttribute('href', `${remote.url}/chart.png?markdown`);
  await expect(link).toHaveAttribute('rel', 'noopener noreferrer');
  await expect(answer.getByRole('link', { name: 'Image from 127.0.0.1' })).toHaveAttribute('href', `${remote.url}/chart.png?html`);
  await expect(answer.getByRole('img', { name: 'dot' })).toHaveJSProperty('complete', true);

  // Even an image that got past the rendering is refused by the policy: its error event is the
  // sign that the browser has decided, after every image of the answer above.
  const refused = await page.evaluate(async (src) => {
    const img = document.createElement('img');
    const done = new Promise<string>((resolve) => {
      img.onload = () => resolve('loaded');
      img.onerror = () => resolve('refused');
    });
    img.src = src;
    document.body.append(img);
    return done;
  }, `${remote.url}/chart.png?injected`);
  expect(refused).toBe('refused');
  expect(await cspViolations(page)).toContainEqual(expect.stringContaining(`img-src blocked ${remote.url}/chart.png?injected`));
  expect(remote.seen, 'requests that reached the other server').toEqual([]);

  // Asked for, the image opens in a new tab, and the other server learns nothing of the app.
  const [opened] = await Promise.all([page.context().waitForEvent('page'), link.click()]);
  await opened.waitForLoadState();
  // (The new tab's own favicon request, which Chromium may send after the image, is the browser's, not the app's.)
  expect(remote.seen.filter((r) => r.path !== '/favicon.ico')).toEqual([{ path: '/chart.png?markdown', referer: undefined }]);
  expect(await opened.evaluate(() => window.opener)).toBeNull();
  await opened.close();

  if (process.env.E2E_SHOTS) {
    for (const scheme of ['light', 'dark'] as const) {
      for (const [size, viewport] of Object.entries({ desktop: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } })) {
        await page.emulateMedia({ colorScheme: scheme });
        await page.setViewportSize(viewport);
        await page.reload();
        await expect(link).toBeVisible();
        // the answer's SVG image and video poster, which the rendering leaves to the policy
        await checkScreen(page, `remote image ${size} ${scheme}`, scheme, new RegExp(`^img-src blocked ${remote.url}/`));
        await page.screenshot({ path: path.join(process.env.E2E_SHOTS, `chat-remote-image-${size}-${scheme}.png`) });
      }
    }
  }
});

test('another site cannot frame the app', async ({ page, atrium }) => {
  await signIn(page);
  const refusals: string[] = [];
  page.on('console', (m) => {
    if (/frame-ancestors/.test(m.text())) refusals.push(m.text());
  });
  remote.setFramed(`${atrium.url}/`);
  await page.goto(`${remote.url}/frame.html`);
  await expect(page.locator('body')).toHaveAttribute('data-framed', 'loaded');
  const frame = page.frames().find((f) => f !== page.mainFrame());
  expect(frame, 'the iframe').toBeDefined();
  // the browser shows its own error page in the frame, not the app
  expect(frame!.url()).not.toContain(atrium.url);
  expect(refusals).toEqual([expect.stringContaining("frame-ancestors 'none'")]);
});

test('an inline handler that reached the page would not run', async ({ page }) => {
  await signIn(page);
  const ran = await page.evaluate(async () => {
    const w = window as unknown as { ranInline?: boolean };
    const div = document.createElement('div');
    div.innerHTML = '<img src="/no-such-image.png" onerror="window.ranInline = true">';
    // the image's error event runs its handler (if allowed) before this listener, added later
    await new Promise<void>((resolve) => div.querySelector('img')!.addEventListener('error', () => setTimeout(resolve, 0)));
    document.body.append(div);
    return w.ranInline ?? false;
  });
  expect(ran).toBe(false);
  expect(await cspViolations(page)).toContainEqual(expect.stringMatching(/^script-src-attr blocked inline/));
});

test('the API explorer at /docs works under its own policy', async ({ page }) => {
  await page.goto('/docs');
  await expect(page.getByRole('heading', { name: /Atrium API/ })).toBeVisible();
  await expect(page.getByText('/api/v1/me').first()).toBeVisible();
  await page.getByText('/api/v1/me').first().click();
  await expect(page.getByRole('button', { name: 'Try it out' })).toBeVisible();
  expect(await cspViolations(page)).toEqual([]);
});
