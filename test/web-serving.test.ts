/**
 * The web app served at `/`: files of the build, index.html for the app's own paths,
 * 404 problems for missing files and for the API's unknown paths, cache headers, and a server
 * that starts without a build.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { brotliCompressSync, brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, startTestApp, type TestApp } from './helpers/app.js';

const INDEX = '<!doctype html><title>Atrium app</title><div id="root"></div><script src="/assets/app-abc.js"></script>';
const SCRIPT = 'console.log("atrium app");';
const BIG = `export const words = ${JSON.stringify(Array.from({ length: 2000 }, (_, i) => `word${i % 50}`))};`;

function webFixture(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'atrium-web-'));
  mkdirSync(path.join(dir, 'assets'));
  writeFileSync(path.join(dir, 'index.html'), INDEX);
  writeFileSync(path.join(dir, 'assets', 'app-abc.js'), SCRIPT);
  // what the build's precompression writes beside a large file (web/vite.config.mjs)
  writeFileSync(path.join(dir, 'assets', 'big-abc.js'), BIG);
  writeFileSync(path.join(dir, 'assets', 'big-abc.js.br'), brotliCompressSync(BIG));
  writeFileSync(path.join(dir, 'assets', 'big-abc.js.gz'), gzipSync(BIG));
  writeFileSync(path.join(dir, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  writeFileSync(path.join(dir, '.secret'), 'dotfiles are never served');
  return dir;
}

describe('with a build', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ webDir: webFixture() });
  });
  afterAll(() => t.close());

  it('answers index.html, not cached, at / and at any path of the app', async () => {
    for (const url of ['/', '/workspaces/123', '/invite', '/settings/profile?tab=1', '/documents']) {
      const res = await t.request({ method: 'GET', url });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['content-type'], url).toMatch(/^text\/html/);
      expect(res.headers['cache-control'], url).toBe('no-cache');
      expect(res.body, url).toBe(INDEX);
    }
    const head = await t.request({ method: 'HEAD', url: '/workspaces' });
    expect(head.statusCode).toBe(200);
    expect(head.body).toBe('');
  });

  it('sends the build\u2019s brotli or gzip copy to a client that accepts it, the plain file otherwise', async () => {
    const br = await t.request({ method: 'GET', url: '/assets/big-abc.js', headers: { 'accept-encoding': 'gzip, deflate, br' } });
    expect(br.headers['content-encoding']).toBe('br');
    expect(br.headers['content-type']).toMatch(/^text\/javascript/);
    expect(br.headers.vary).toMatch(/Accept-Encoding/);
    expect(br.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(brotliDecompressSync(br.rawPayload).toString()).toBe(BIG);
    expect(br.rawPayload.length).toBeLessThan(BIG.length / 4);
    const gz = await t.request({ method: 'GET', url: '/assets/big-abc.js', headers: { 'accept-encoding': 'gzip, br;q=0' } });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gz.rawPayload).toString()).toBe(BIG);
    const plain = await t.request({ method: 'GET', url: '/assets/big-abc.js' });
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body).toBe(BIG);
    // a file without a compressed copy is sent as it is, whatever the client accepts
    const small = await t.request({ method: 'GET', url: '/assets/app-abc.js', headers: { 'accept-encoding': 'br, gzip' } });
    expect(small.headers['content-encoding']).toBeUndefined();
    expect(small.body).toBe(SCRIPT);
  });

  it('serves the files of the build, hashed assets cached for a year', async () => {
    const js = await t.request({ method: 'GET', url: '/assets/app-abc.js' });
    expect(js.statusCode).toBe(200);
    expect(js.headers['content-type']).toMatch(/javascript/);
    expect(js.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(js.body).toBe(SCRIPT);
    const icon = await t.request({ method: 'GET', url: '/favicon.svg' });
    expect(icon.statusCode).toBe(200);
    expect(icon.headers['cache-control']).toBe('no-cache');
    const index = await t.request({ method: 'GET', url: '/index.html' });
    expect(index.body).toBe(INDEX);
  });

  it('revalidates by ETag (304) and answers byte ranges', async () => {
    const first = await t.request({ method: 'GET', url: '/assets/app-abc.js' });
    const etag = first.headers.etag as string;
    expect(etag).toBeTruthy();
    const again = await t.request({ method: 'GET', url: '/assets/app-abc.js', headers: { 'if-none-match': etag } });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
    const app = await t.request({
      method: 'GET',
      url: '/workspaces',
      headers: { 'if-none-match': (await t.request({ method: 'GET', url: '/' })).headers.etag as string },
    });
    expect(app.statusCode).toBe(304);
    const part = await t.request({ method: 'GET', url: '/assets/app-abc.js', headers: { range: 'bytes=0-6' } });
    expect(part.statusCode).toBe(206);
    expect(part.body).toBe(SCRIPT.slice(0, 7));
  });

  it('answers a missing file with a 404 problem, never index.html', async () => {
    for (const url of [
      '/assets/x.js',
      '/assets/',
      '/assets/app-abc.js.map',
      '/missing.css',
      '/deep/path/logo.png',
      '/.secret',
      '/assets/..%2f..%2fpackage.json',
      '/..%2fpackage.json',
      '/assets/%00.js',
    ]) {
      const res = await t.request({ method: 'GET', url });
      expect(res.statusCode, url).toBe(404);
      expect(res.headers['content-type'], url).toMatch(/^application\/problem\+json/);
      expect(res.body, url).not.toContain('Atrium app');
    }
  });

  it("leaves the API's and the server's own paths alone", async () => {
    // raw: a path the document does not have
    expect(expectProblem(await t.request({ method: 'GET', url: '/api/v1/nope' }), 404).code).toBe('route_not_found');
    expectProblem(await t.api().GET('/api/v1/me'), 401);
    expectProblem(await t.request({ method: 'GET', url: '/api' }), 404);
    // /v1 answers in OpenAI's error shape (its scope authenticates first: no key, 401), never index.html
    // raw: a path the document does not have
    const v1 = await t.request({ method: 'GET', url: '/v1/anything' });
    expect(v1.statusCode).toBe(401);
    expect(v1.headers['content-type']).toMatch(/^application\/json/);
    expect(v1.json().error.code).toBe('missing_api_key');
    expectProblem(await t.request({ method: 'GET', url: '/docs/nope-nothing-here' }), 404);
    expect((await t.request({ method: 'GET', url: '/healthz' })).json()).toEqual({ status: 'ok' });
    expect((await t.request({ method: 'GET', url: '/openapi.json' })).json().openapi).toBe('3.1.0');
    expect((await t.request({ method: 'GET', url: '/docs' })).statusCode).toBeLessThan(400);
  });

  it('keeps the 404 and 405 problem answers for other methods', async () => {
    expectProblem(await t.request({ method: 'POST', url: '/workspaces' }), 404);
    expectProblem(await t.request({ method: 'DELETE', url: '/' }), 404);
    expectProblem(await t.request({ method: 'PUT', url: '/assets/app-abc.js' }), 404);
    const res = expectProblem(await t.request({ method: 'POST', url: '/healthz' }), 405);
    expect(res.code).toBe('method_not_allowed');
  });
});

describe('without a build', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ webDir: path.join(mkdtempSync(path.join(tmpdir(), 'atrium-web-')), 'absent') });
  });
  afterAll(() => t.close());

  it('starts, and says at / that the web app is not built', async () => {
    const res = await t.request({ method: 'GET', url: '/' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.body).toContain('npm run build');
    expectProblem(await t.request({ method: 'GET', url: '/assets/app-abc.js' }), 404);
    expect((await t.request({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
  });
});
