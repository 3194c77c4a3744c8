/**
 * Nothing in a model's answer, nor in a name, title or file name, runs in the app — checked in
 * Chromium with the serialiser Chromium had before mid-2025 (old-serialiser.ts), under which an
 * app that re-reads sanitised HTML as text can be broken out of an attribute value.
 *
 * The Content-Security-Policy would block inline handlers on its own; this file turns it off
 * (bypassCSP) so that it tests the rendering itself. security.spec.ts tests the policy.
 *
 * "Nothing runs": every payload calls `top.pwn(i)` (and alert/confirm/prompt are recorded too)
 * if it ever runs; the test waits until every image shown has fired its load or error event (the
 * event a handler waits for), then checks no call was recorded, and looks in what is shown for
 * anything that could run later (a handler attribute, a `javascript:` URL, an active element).
 * A first test shows that both the emulation and the detection work.
 */
import type { Page } from '@playwright/test';
import { installOldSerialiser } from './old-serialiser.js';
import { createStandInModel } from './server.js';
import { expect, signIn, test } from './fixtures.js';
import { armed, PAYLOADS } from './xss-payloads.js';

test.use({ bypassCSP: true });

type Watched = Window & { __ran: string[]; __settled: WeakSet<EventTarget>; __nativeInnerHTML: (el: Element) => string };

/** In every frame, before the app: record calls to `pwn` and dialogs, and which elements have loaded or failed. */
function installDetector(): void {
  const w = window as unknown as Watched & Record<string, unknown>;
  w.__ran = [];
  w.pwn = (id: unknown) => w.__ran.push(String(id));
  for (const name of ['alert', 'confirm', 'prompt']) w[name] = (m: unknown) => w.__ran.push(`${name}(${String(m)})`);
  w.__settled = new WeakSet();
  // capture phase on window: runs for every element's load/error, before the element's own handler
  const mark = (e: Event) => {
    if (e.target instanceof Element) w.__settled.add(e.target);
  };
  window.addEventListener('load', mark, true);
  window.addEventListener('error', mark, true);
}

const dialogs: string[] = [];

test.beforeEach(async ({ page }) => {
  dialogs.length = 0;
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  await page.addInitScript(installOldSerialiser);
  await page.addInitScript(installDetector);
});

/** Wait until every image on the page has loaded or failed, and the tasks its events queued have run. */
async function settle(page: Page): Promise<void> {
  await expect
    .poll(
      () =>
        page.evaluate(
          () =>
            Array.from(document.querySelectorAll('img[src], video[src], audio[src], source[src]')).filter(
              (el) => !(window as unknown as Watched).__settled.has(el),
            ).length,
        ),
      {
        message: 'every image has loaded or failed',
      },
    )
    .toBe(0);
  await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 0)));
}

/** What ran (payload indexes, dialogs). */
async function ran(page: Page): Promise<string[]> {
  const calls = await page.evaluate(() => (window as unknown as Watched).__ran);
  return [...calls.map((c) => (/^\d+$/.test(c) ? `payload ${c}: ${PAYLOAD_NAMES[Number(c)] ?? '?'}` : c)), ...dialogs.map((d) => `dialog: ${d}`)];
}
const PAYLOAD_NAMES = PAYLOADS.map((p) => p.name);

/**
 * Anything in `selector` that could run now or later: handler attributes, script URLs and (in
 * answers, where the app puts no controls) active elements.
 */
function dangerousIn(page: Page, selector: string, what: 'answers' | 'app'): Promise<string[]> {
  return page.evaluate(
    ([sel, answers]) => {
      const ACTIVE = new Set([
        'script',
        'iframe',
        'frame',
        'frameset',
        'object',
        'embed',
        'applet',
        'base',
        'meta',
        'link',
        'form',
        'style',
        'input',
        'textarea',
        'select',
        'template',
        'noscript',
        'set',
        'animate',
        'handler',
      ]);
      const URL_ATTR = /^(?:href|xlink:href|src|action|formaction|data|poster|background|srcdoc|to|from|values|codebase)$/i;
      const found: string[] = [];
      for (const root of Array.from(document.querySelectorAll(sel))) {
        for (const el of Array.from(root.querySelectorAll('*'))) {
          const tag = el.localName;
          if (tag === 'script' || (answers && ACTIVE.has(tag))) found.push(`<${tag}>`);
          if (answers && tag === 'button' && !(el.classList.contains('copy-code') && el.parentElement?.classList.contains('code-block')))
            found.push('<button> not made by the app');
          for (const a of Array.from(el.attributes)) {
            if (/^on/i.test(a.name)) found.push(`<${tag} ${a.name}>`);
            if (URL_ATTR.test(a.name) && /^(?:javascript|vbscript|data:text\/html)/i.test(a.value.replace(/[\u0000-\u0020]/g, '')))
              found.push(`<${tag} ${a.name}="${a.value}">`);
          }
        }
      }
      return found;
    },
    [selector, what === 'answers'] as const,
  );
}

test('the emulated serialiser leaves < and > in attribute values, and a payload that runs is detected', async ({ page }) => {
  await page.goto('/');
  const emulated = await page.evaluate(() => {
    const w = window as unknown as Watched;
    const div = document.createElement('div');
    div.innerHTML =
      '<p title="&lt;pre x&gt;&lt;img src=x&gt;" class="a&amp;b">x &lt; y &amp; <b>z</b></p><br><svg><a xlink:href="#q"><text>t</text></a></svg><template><i>t</i></template><!--c--><style>a > b {}</style>';
    return {
      old: div.innerHTML,
      outer: (div.firstChild as Element).outerHTML,
      native: w.__nativeInnerHTML(div),
    };
  });
  expect(emulated.old).toBe(
    '<p title="<pre x><img src=x>" class="a&amp;b">x &lt; y &amp; <b>z</b></p><br><svg><a xlink:href="#q"><text>t</text></a></svg><template><i>t</i></template><!--c--><style>a > b {}</style>',
  );
  expect(emulated.outer).toBe('<p title="<pre x><img src=x>" class="a&amp;b">x &lt; y &amp; <b>z</b></p>');
  // today's serialiser differs only in the attribute's < and >
  expect(emulated.native).toBe(emulated.old.replace('title="<pre x><img src=x>"', 'title="&lt;pre x&gt;&lt;img src=x&gt;"'));

  // the detector sees a handler that runs (the policy is bypassed in this file)
  await page.evaluate(() => {
    const div = document.createElement('div');
    div.innerHTML = '<img src="/no-such-image.png" onerror="top.pwn(\'control\')">';
    document.body.append(div);
  });
  await settle(page);
  expect(await ran(page)).toEqual(['control']);
});

test('hostile answers run nothing, stored or streamed, and code blocks keep their copy button', async ({ page, atrium }) => {
  test.setTimeout(180_000);
  const model = await createStandInModel(atrium, `XSS ${Date.now()}`);
  const ws = await atrium.api<{ id: string }>('POST', '/api/v1/workspaces', { name: 'Hostile answers', modelIds: [model.id] });
  let threadId: string | undefined;
  for (const [i, p] of PAYLOADS.entries()) {
    atrium.standIn.set({ reply: `Payload ${i}:\n\n${armed(p.markdown, i)}` });
    const turn = await atrium.api<{ threadId: string }>('POST', `/api/v1/chat/${ws.id}/completions`, {
      prompt: `payload ${i}`,
      ...(threadId ? { threadId } : {}),
    });
    threadId = turn.threadId;
  }
  atrium.standIn.reset();

  await signIn(page);
  await page.goto(`/w/${ws.id}/t/${threadId}`);
  const answers = page.getByRole('article', { name: 'Answer' });
  await expect(answers.last()).toContainText(`Payload ${PAYLOADS.length - 1}:`);
  // a long thread opens on its last messages
  const earlier = page.getByRole('button', { name: /^Show earlier messages/ });
  await expect(async () => {
    // earlier messages also load by themselves as the list scrolls up, which can replace the button under a click
    if ((await earlier.count()) > 0) await earlier.click({ timeout: 2000 });
    await expect(answers).toHaveCount(PAYLOADS.length, { timeout: 1000 });
  }).toPass({ timeout: 60_000 });
  await expect(answers.last()).toContainText(`Payload ${PAYLOADS.length - 1}:`);
  await settle(page);
  expect(await ran(page), 'payloads that ran').toEqual([]);
  expect(await dangerousIn(page, '.markdown', 'answers'), 'what could run later').toEqual([]);
  // the app's own additions still work: every code block has its copy button
  const blocks = await page.evaluate(() => ({
    pre: document.querySelectorAll('.markdown pre').length,
    wrapped: document.querySelectorAll('.markdown .code-block > button.copy-code + pre').length,
  }));
  expect(blocks.pre).toBeGreaterThan(0);
  expect(blocks.wrapped).toBe(blocks.pre);

  // The same payloads arriving as a stream, rendered block by block while they arrive.
  atrium.standIn.set({ chunkDelayMs: 5, reply: PAYLOADS.map((p, i) => armed(p.markdown, i)).join('\n\n') });
  await page.getByRole('textbox', { name: 'Message' }).fill('all of them at once');
  await page.getByRole('button', { name: 'Send' }).click();
  await expect(page.getByRole('button', { name: 'Stop' })).toBeVisible();
  await expect(page.getByRole('button', { name: 'Send' })).toBeVisible();
  await expect(answers).toHaveCount(PAYLOADS.length + 1);
  await settle(page);
  expect(await ran(page), 'payloads that ran while streaming').toEqual([]);
  expect(await dangerousIn(page, '.markdown', 'answers'), 'what could run later').toEqual([]);
});

test('names, titles and file names are shown as text everywhere', async ({ page, atrium }) => {
  test.setTimeout(180_000);
  const hostile = (n: number) => `"><img src=x onerror=top.pwn(${n})><svg onload=top.pwn(${n})>`;
  const model = await createStandInModel(atrium, `Model ${hostile(101)}`);
  const ws = await atrium.api<{ id: string }>('POST', '/api/v1/workspaces', {
    name: `Workspace ${hostile(102)}`,
    modelIds: [model.id],
    greeting: `Greeting ${hostile(103)}`,
    samplePrompts: [`Sample ${hostile(104)}`],
  });
  const turn = await atrium.api<{ threadId: string }>('POST', `/api/v1/chat/${ws.id}/completions`, { prompt: `Thread ${hostile(105)}` });
  const user = `User ${hostile(106)}`;
  await atrium.api('POST', '/api/v1/users', { name: user, email: `hostile-${Date.now()}@example.test`, role: 'member' });
  await atrium.api('POST', '/api/v1/api-keys', { name: `Key ${hostile(107)}` });

  await signIn(page);
  const plusId = await page.evaluate(
    async ([title, filename]) => {
      const form = new FormData();
      form.append('title', title);
      form.append('description', title);
      form.append('isPublic', 'true');
      const made = (await (await fetch('/api/v1/plus', { method: 'POST', body: form })).json()) as { id: string };
      const files = new FormData();
      files.append('files', new File(['# Notes\n\nNothing to see.\n'], filename, { type: 'text/markdown' }));
      const res = await fetch(`/api/v1/plus/${made.id}/add-file`, { method: 'POST', body: files });
      if (!res.ok) throw new Error(`add-file ${res.status}`);
      return made.id;
    },
    [`Entry ${hostile(108)}`, `file ${hostile(109)}.md`] as const,
  );

  const screens: Array<[string, string[]]> = [
    ['/', [`Workspace ${hostile(102)}`]],
    [`/w/${ws.id}`, [`Greeting ${hostile(103)}`, `Sample ${hostile(104)}`]],
    [`/w/${ws.id}/t/${turn.threadId}`, [`Thread ${hostile(105)}`, `Model ${hostile(101)}`]],
    ['/models', [`Model ${hostile(101)}`]],
    ['/team', [user]],
    ['/account', [`Key ${hostile(107)}`]],
    ['/documents', [`Entry ${hostile(108)}`]],
    // the browser sends the file name's quote as %22, the server replaces < and >
    [`/documents/${plusId}`, ['img src=x onerror=top.pwn(109)']],
    ['/logs', [`Thread ${hostile(105)}`]],
  ];
  for (const [url, texts] of screens) {
    await page.goto(url);
    for (const text of texts) await expect(page.getByText(text, { exact: false }).first(), `${url} shows ${text} as text`).toBeVisible();
    await settle(page);
    expect(await ran(page), `${url}: what ran`).toEqual([]);
    expect(await dangerousIn(page, 'body', 'app'), `${url}: what could run later`).toEqual([]);
  }
});
