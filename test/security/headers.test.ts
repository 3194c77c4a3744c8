/**
 * Every kind of answer carries the security headers (src/http/security-headers.ts): API JSON,
 * problem+json (from a route, from authentication, from the framework before any hook), /v1 in
 * both shapes, a hijacked event stream, the web app's index.html and files, /healthz, /readyz,
 * /openapi.json, and /docs with its own looser policy.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { OutgoingHttpHeaders } from 'node:http';
import createClient from 'openapi-fetch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { paths } from '../helpers/api.js';
import { ADMIN_KEY, newTeam, startTestApp, type TestApp } from '../helpers/app.js';
import { createModel, createWorkspace } from '../helpers/factories.js';
import { useStandIn } from '../support/use-standin.js';

const s = useStandIn();
let t: TestApp;
let baseUrl: string;

function webFixture(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'atrium-web-'));
  mkdirSync(path.join(dir, 'assets'));
  writeFileSync(
    path.join(dir, 'index.html'),
    '<!doctype html><title>Atrium</title><div id="app"></div><script type="module" src="/assets/app-abc.js"></script>',
  );
  writeFileSync(path.join(dir, 'assets', 'app-abc.js'), 'console.log("app");');
  return dir;
}

beforeAll(async () => {
  t = await startTestApp({ webDir: webFixture() });
  baseUrl = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await t.close();
});

/** The directives of a Content-Security-Policy header, by name. */
function directives(headers: OutgoingHttpHeaders | Headers): Map<string, string> {
  const raw = headers instanceof Headers ? headers.get('content-security-policy') : headers['content-security-policy'];
  expect(typeof raw, 'a Content-Security-Policy header').toBe('string');
  return new Map(
    String(raw)
      .split(';')
      .map((d) => d.trim())
      .filter(Boolean)
      .map((d) => {
        const [name, ...values] = d.split(/\s+/);
        return [name!, values.join(' ')] as [string, string];
      }),
  );
}

function get(headers: OutgoingHttpHeaders | Headers, name: string): string | undefined {
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  const v = headers[name];
  return Array.isArray(v) ? v.join(', ') : v === undefined ? undefined : String(v);
}

/** The headers every answer carries, and which policy it has. */
function expectSecured(headers: OutgoingHttpHeaders | Headers, kind: 'app' | 'api' | 'docs', what: string): void {
  expect(get(headers, 'x-frame-options'), what).toBe('DENY');
  expect(get(headers, 'x-content-type-options'), what).toBe('nosniff');
  expect(get(headers, 'referrer-policy'), what).toBe('strict-origin-when-cross-origin');
  const csp = directives(headers);
  expect(csp.get('frame-ancestors'), what).toBe("'none'");
  expect(csp.get('base-uri'), what).toBe("'none'");
  expect(csp.get('object-src') ?? csp.get('default-src'), what).toBe("'none'");
  if (kind === 'app') {
    expect(csp.get('img-src'), what).toBe("'self' data: blob:");
    expect(csp.get('script-src'), what).toBe("'self'");
    expect(csp.get('style-src'), what).toBe("'self'");
    expect(csp.get('connect-src'), what).toBe("'self'");
  } else if (kind === 'api') {
    expect(csp.get('default-src'), what).toBe("'none'");
    expect(csp.has('sandbox'), what).toBe(true);
  } else {
    expect(csp.get('script-src'), what).toBe("'self'");
    expect(csp.get('img-src'), what).toBe("'self' data:");
  }
}

describe('security headers', () => {
  it('on API JSON and on every kind of problem', async () => {
    const team = await newTeam(t);
    const api = t.api(team.ownerKey);
    const typed: Array<[string, () => Promise<{ response: Response }>, number]> = [
      ['API JSON', () => api.GET('/api/v1/me'), 200],
      ['401 without a key', () => t.api().GET('/api/v1/me'), 401],
      ['403 of a member', () => api.POST('/api/v1/teams', { body: { name: 'x', ownerName: 'y', ownerEmail: 'y@example.com' } }), 403],
    ];
    for (const [what, call, status] of typed) {
      const { response } = await call();
      expect(response.status, what).toBe(status);
      if (status !== 200) expect(response.headers.get('content-type'), what).toMatch(/^application\/problem\+json/);
      expectSecured(response.headers, 'api', what);
    }
    // raw: an unknown path, a malformed body, a bad encoding and a method the document does not have
    const raw: Array<[string, Parameters<TestApp['request']>[0], number]> = [
      ['404 of an unknown API path', { method: 'GET', url: '/api/v1/nothing-here', key: team.ownerKey }, 404], // raw: unknown path
      [
        '400 malformed JSON',
        { method: 'POST', url: '/api/v1/workspaces', key: team.ownerKey, headers: { 'content-type': 'application/json' }, payload: '{"name":' }, // raw: malformed JSON
        400,
      ],
      ['400 bad percent-encoding (answered before any hook)', { method: 'GET', url: '/api/v1/workspaces/%zz', key: team.ownerKey }, 400], // raw: bad encoding
      ['405 of a known path', { method: 'PATCH', url: '/api/v1/me', key: team.ownerKey }, 405], // raw: undocumented method
    ];
    for (const [what, req, status] of raw) {
      const res = await t.request(req);
      expect(res.statusCode, what).toBe(status);
      expect(res.headers['content-type'], what).toMatch(/^application\/problem\+json/);
      expectSecured(res.headers, 'api', what);
    }
  });

  it('on /v1 in OpenAI shape, /healthz, /readyz and /openapi.json', async () => {
    const typed: Array<[string, () => Promise<{ response: Response }>, number]> = [
      ['/v1 models', () => t.api(ADMIN_KEY).GET('/v1/models'), 200],
      ['/v1 error', () => t.api().GET('/v1/models'), 401],
    ];
    for (const [what, call, status] of typed) {
      const { response } = await call();
      expect(response.status, what).toBe(status);
      expectSecured(response.headers, 'api', what);
    }
    // raw: the probes and the document itself are not in the document
    for (const url of ['/healthz', '/readyz', '/openapi.json']) {
      const res = await t.request({ method: 'GET', url });
      expect(res.statusCode, url).toBe(200);
      expectSecured(res.headers, 'api', url);
    }
  });

  it('on an event stream (written on the raw response)', async () => {
    const team = await newTeam(t);
    const model = await createModel(t, team.ownerKey, { url: s.standIn.openaiBaseUrl });
    const ws = await createWorkspace(t, team.ownerKey, { modelIds: [model.id] });
    // over a real socket, so the raw response's own headers are seen
    const api = createClient<paths>({ baseUrl, headers: { authorization: `Bearer ${team.ownerKey}` } });
    const { data, response } = await api.POST('/api/v1/chat/{workspaceId}/completions/stream', {
      params: { path: { workspaceId: ws.id } },
      body: { prompt: 'hello' },
      parseAs: 'text',
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(data).toContain('event: done');
    expectSecured(response.headers, 'api', 'event stream');
  });

  it('on the web app: index.html at any of its paths, its files, and a missing file', async () => {
    for (const url of ['/', '/w/123/t/456', '/documents?x=1']) {
      const res = await t.request({ method: 'GET', url });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['content-type'], url).toMatch(/^text\/html/);
      expectSecured(res.headers, 'app', url);
    }
    const asset = await t.request({ method: 'GET', url: '/assets/app-abc.js' });
    expect(asset.statusCode).toBe(200);
    expectSecured(asset.headers, 'app', 'a static file');
    const missing = await t.request({ method: 'GET', url: '/assets/missing.js' });
    expect(missing.statusCode).toBe(404);
    expectSecured(missing.headers, 'app', 'a missing file');
  });

  it('on /docs, with its own policy, and no other path gets it', async () => {
    const page = await t.request({ method: 'GET', url: '/docs/' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expectSecured(page.headers, 'docs', '/docs/');
    const script = await t.request({ method: 'GET', url: '/docs/static/swagger-initializer.js' });
    expect(script.statusCode).toBe(200);
    expectSecured(script.headers, 'docs', 'a file of /docs');
    // a path that only starts like it is the app's
    expectSecured((await t.request({ method: 'GET', url: '/docsy' })).headers, 'app', '/docsy');
  });
});
