/**
 * The installable app: a manifest with the icons an install needs, and a service worker that keeps
 * the shell, so the app opens without a connection and says so (and never keeps an API answer).
 */
import { expect, signIn, test } from './fixtures.js';

test.use({ serviceWorkers: 'allow' });

test('the manifest names the app and its icons, which load', async ({ page, request }) => {
  await page.goto('/');
  const href = await page.locator('link[rel="manifest"]').getAttribute('href');
  expect(href).toBe('/manifest.webmanifest');
  const res = await request.get(href!);
  expect(res.headers()['content-type']).toContain('application/manifest+json');
  const manifest = (await res.json()) as { name: string; start_url: string; display: string; icons: Array<{ src: string; sizes: string; type: string }> };
  expect(manifest).toMatchObject({ name: 'Atrium', start_url: '/', display: 'standalone' });
  for (const size of ['192x192', '512x512']) {
    const icon = manifest.icons.find((i) => i.sizes === size && i.type === 'image/png');
    expect(icon, size).toBeDefined();
    const bytes = await (await request.get(icon!.src)).body();
    // A PNG whose header gives the size the manifest says.
    expect(bytes.subarray(1, 4).toString('latin1')).toBe('PNG');
    expect(`${bytes.readUInt32BE(16)}x${bytes.readUInt32BE(20)}`).toBe(size);
  }
});

test('opens without a connection and says it is offline; back online, it works again', async ({ page, context }) => {
  await signIn(page);
  // The service worker is installed and controls the page once it has kept the shell.
  await page.evaluate(async () => {
    await navigator.serviceWorker.ready;
  });
  await page.reload();
  await expect.poll(() => page.evaluate(() => navigator.serviceWorker.controller !== null)).toBe(true);

  // It keeps the app's own files, never an answer of the API.
  const kept = await page.evaluate(async () => {
    const names = await caches.keys();
    const urls: string[] = [];
    for (const name of names) for (const r of await (await caches.open(name)).keys()) urls.push(new URL(r.url).pathname);
    return urls;
  });
  expect(kept).toContain('/');
  expect(kept.some((u) => u.startsWith('/assets/') && u.endsWith('.js'))).toBe(true);
  expect(kept.filter((u) => /^\/(api|v1)\//.test(u))).toEqual([]);

  await context.setOffline(true);
  await page.goto('/');
  await expect(page.getByRole('heading', { name: 'You are offline' })).toBeVisible();
  await expect(page.getByRole('button', { name: 'Try again' })).toBeVisible();

  await context.setOffline(false);
  await expect(page.getByRole('heading', { name: 'Workspaces' })).toBeVisible();
});
