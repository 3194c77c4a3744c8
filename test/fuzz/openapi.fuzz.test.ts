/**
 * No 500 for bad input, anywhere. Every operation of /openapi.json is fuzzed with
 * requests drawn from its own parameter and body schemas (valid values and values near and far
 * outside them, right and wrong media types), on whichever database the suite runs on. Any 5xx
 * fails, except 502/504: the answers docs/API.md gives a model provider's failure (a fuzzed model
 * URL may point at a closed port). Every error is problem+json and lists a bounded number of problems.
 *
 * Reproduce a failure with the seed printed at the start: ATRIUM_FUZZ_SEED=<seed> ATRIUM_FUZZ_RUNS=<n>.
 */
import fc from 'fast-check';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_LISTED_PROBLEMS } from '../../src/http/problem.js';
import { newTeam, startTestApp, type TestApp } from '../helpers/app.js';
import { createModel, createWorkspace } from '../helpers/factories.js';
import { multipart, type Part } from '../helpers/multipart.js';
import { startStandInProvider, type StandInProvider } from '../support/standin-provider.js';
import { invalid, resolve, valid, type FuzzContext, type Schema } from './arbitraries.js';

const SEED = Number(process.env.ATRIUM_FUZZ_SEED ?? 20_261_122);
const RUNS = Number(process.env.ATRIUM_FUZZ_RUNS ?? 30);
const PROVIDER_STATUSES = new Set([502, 504]);

interface Operation {
  method: string;
  path: string;
  parameters: Array<{ name: string; in: 'path' | 'query'; required?: boolean; schema: Schema }>;
  body?: { required?: boolean; json?: Schema; multipart?: Schema };
}

interface FuzzRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  payload?: string | Buffer;
}

let t: TestApp;
let standIn: StandInProvider;
let key: string;
let ctx: FuzzContext;
let ops: Operation[];
/** answers per operation, status → count: printed, and checked for depth */
const seen = new Map<string, Map<number, number>>();

function operationsOf(doc: Schema): Operation[] {
  const out: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, Schema>>)) {
    for (const [method, op] of Object.entries(item)) {
      if (method === 'head' || !op.responses) continue;
      const content = op.requestBody?.content as Record<string, { schema: Schema }> | undefined;
      out.push({
        method: method.toUpperCase(),
        path,
        parameters: (op.parameters ?? []).filter((p: Schema) => p.in === 'path' || p.in === 'query'),
        ...(content
          ? {
              body: {
                required: op.requestBody.required,
                ...(content['application/json'] ? { json: content['application/json'].schema } : {}),
                ...(content['multipart/form-data'] ? { multipart: content['multipart/form-data'].schema } : {}),
              },
            }
          : {}),
      });
    }
  }
  // Deletions last, so the fixtures the others draw ids from live as long as possible.
  return out.sort((a, b) => Number(a.method === 'DELETE') - Number(b.method === 'DELETE'));
}

/** Percent-encode a value for a URL; what cannot be encoded (a lone surrogate) is sent as a broken escape. */
function enc(v: unknown): string {
  const text = typeof v === 'string' ? v : typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v);
  try {
    return encodeURIComponent(text);
  } catch {
    return '%ED%A0%';
  }
}

const FILE_NAMES = ['a.txt', 'b.md', 'c.csv', 'd.json', 'e.html', 'f.pdf', 'g.docx', 'noext', '../../x.txt', '', 'ü n i.txt'];
const FILE_TYPES = ['text/plain', 'text/markdown', 'text/csv', 'application/json', 'text/html', 'application/pdf', 'application/octet-stream', 'image/png', ''];

// Mostly well-formed text files under the documented part name, so that uploads reach ingestion.
const fileArb: fc.Arbitrary<Part> = fc.record({
  name: fc.oneof({ arbitrary: fc.constant('files'), weight: 4 }, { arbitrary: fc.constantFrom('file', 'other'), weight: 1 }),
  filename: fc.oneof({ arbitrary: fc.constantFrom('a.txt', 'b.md'), weight: 3 }, { arbitrary: fc.constantFrom(...FILE_NAMES), weight: 2 }),
  contentType: fc.oneof({ arbitrary: fc.constant('text/plain'), weight: 3 }, { arbitrary: fc.constantFrom(...FILE_TYPES), weight: 2 }),
  data: fc.oneof(
    { arbitrary: fc.lorem({ maxCount: 40 }).map((s) => Buffer.from(s)), weight: 3 },
    fc.string({ maxLength: 300, unit: 'grapheme' }).map((s) => Buffer.from(s)),
    fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b)),
    fc.constant(Buffer.from('%PDF-1.7\n1 0 obj\n<<>>\nendobj\n')),
    fc.constant(Buffer.from('PK\u0003\u0004broken zip')),
  ),
});

function formArb(schema: Schema, bad: boolean): fc.Arbitrary<{ payload: Buffer; headers: Record<string, string> }> {
  const s = resolve(schema, ctx);
  const fields = Object.entries((s.properties ?? {}) as Record<string, Schema>).filter(([k]) => k !== 'files');
  const fieldArbs = fields.map(([k, v]) =>
    fc.option(
      (bad ? fc.oneof(valid(v, ctx, k), invalid(v, ctx, k)) : valid(v, ctx, k)).map((value) => ({
        name: k,
        value: typeof value === 'string' ? value : (JSON.stringify(value) ?? ''),
      })),
      {
        nil: undefined,
      },
    ),
  );
  return fc
    .tuple(fc.tuple(...fieldArbs), fc.array(fileArb, { maxLength: 2 }))
    .map(([fs, files]) => multipart([...(fs as Array<Part | undefined>).filter((f): f is Part => f !== undefined), ...files]));
}

function requestArb(op: Operation): fc.Arbitrary<FuzzRequest> {
  return fc.boolean().chain((bad) => {
    const pick = (schema: Schema, name: string) => (bad ? fc.oneof(valid(schema, ctx, name), invalid(schema, ctx, name)) : valid(schema, ctx, name));
    const params = op.parameters.map((p) =>
      p.required || p.in === 'path'
        ? pick(p.schema, p.name).map((v) => [p, v] as const)
        : fc.option(
            pick(p.schema, p.name).map((v) => [p, v] as const),
            { nil: undefined },
          ),
    );
    type Body = Pick<FuzzRequest, 'payload' | 'headers'>;
    const bodies: Array<fc.Arbitrary<Body>> = [fc.constant({ headers: {} })];
    if (op.body?.json) {
      const value = pick(op.body.json, 'body');
      bodies.push(value.map((v) => ({ payload: JSON.stringify(v) ?? 'null', headers: { 'content-type': 'application/json' } })));
      bodies.push(value.map((v) => ({ payload: JSON.stringify(v) ?? 'null', headers: { 'content-type': 'application/json' } })));
      bodies.push(
        fc
          .constantFrom('{', '{"a":', '[1,,2]', '"\\ud800"', '{"__proto__":{"x":1}}', 'null', '')
          .map((payload) => ({ payload, headers: { 'content-type': 'application/json; charset=utf-8' } })),
      );
      bodies.push(value.map((v) => ({ payload: JSON.stringify(v) ?? '', headers: { 'content-type': 'text/plain' } })));
      bodies.push(formArb({ properties: { x: { type: 'string' } } }, bad));
    }
    if (op.body?.multipart) {
      bodies.push(formArb(op.body.multipart, bad), formArb(op.body.multipart, bad));
      bodies.push(fc.constant({ payload: '{"files":[]}', headers: { 'content-type': 'application/json' } }));
      bodies.push(fc.constant({ payload: '--x\r\nbroken', headers: { 'content-type': 'multipart/form-data; boundary=x' } }));
    }
    return fc.tuple(fc.tuple(...params), fc.oneof(...bodies)).map(([ps, body]) => {
      let url = op.path;
      const query: string[] = [];
      for (const entry of ps) {
        if (!entry) continue;
        const [p, v] = entry;
        if (p.in === 'path') url = url.replace(`{${p.name}}`, enc(v));
        else if (Array.isArray(v)) for (const item of v) query.push(`${p.name}=${enc(item)}`);
        else query.push(`${p.name}=${enc(v)}`);
      }
      return {
        method: op.method,
        url: query.length ? `${url}?${query.join('&')}` : url,
        headers: { authorization: `Bearer ${key}`, ...body.headers },
        ...(body.payload !== undefined ? { payload: body.payload } : {}),
      };
    });
  });
}

const patternOf = (path: string) => new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}$`);

function describeRequest(r: FuzzRequest): string {
  const payload = r.payload === undefined ? '' : String(r.payload).slice(0, 400);
  return `${r.method} ${r.url.slice(0, 400)} ${JSON.stringify({ ...r.headers, authorization: undefined })} ${payload}`;
}

function check(r: FuzzRequest, res: LightMyRequestResponse): void {
  const where = () => `${res.statusCode} for ${describeRequest(r)}\n→ ${res.body.slice(0, 400)}`;
  if (res.statusCode >= 500 && !PROVIDER_STATUSES.has(res.statusCode)) throw new Error(`server error ${where()}`);
  // The OpenAI-compatible API answers errors in OpenAI's shape, and a mid-stream failure as an `error` chunk.
  if (r.url.startsWith('/v1/')) {
    if (res.statusCode >= 400) {
      if (!String(res.headers['content-type']).startsWith('application/json')) throw new Error(`not JSON: ${where()}`);
      const e = r.method === 'HEAD' ? undefined : (res.json() as { error?: { message?: unknown; type?: unknown } }).error;
      if (r.method !== 'HEAD' && (typeof e?.message !== 'string' || typeof e.type !== 'string')) throw new Error(`not OpenAI's error shape: ${where()}`);
    }
    if (String(res.headers['content-type']).startsWith('text/event-stream') && /"type":"server_error"/.test(res.body))
      throw new Error(`server error chunk: ${where()}`);
    return;
  }
  if (res.statusCode >= 400) {
    if (!String(res.headers['content-type']).startsWith('application/problem+json')) throw new Error(`not problem+json: ${where()}`);
    const errors = r.method === 'HEAD' ? undefined : (res.json() as { errors?: unknown[] }).errors;
    if (errors && errors.length > MAX_LISTED_PROBLEMS) throw new Error(`${errors.length} problems listed: ${where()}`);
  }
  // A streamed answer's failure is an `error` event: a bug there is as much a bug as a 500.
  if (String(res.headers['content-type']).startsWith('text/event-stream') && /"type":"error","status":5(?!02|04)\d\d/.test(res.body)) {
    throw new Error(`server error event: ${where()}`);
  }
}

beforeAll(async () => {
  standIn = await startStandInProvider();
  t = await startTestApp({ providerTimeouts: { connectMs: 1_000, totalMs: 3_000, idleMs: 1_000 } });
  const team = await newTeam(t);
  key = team.ownerKey;
  const member = await team.addUser('member');
  const model = await createModel(t, key, { url: standIn.openaiBaseUrl });
  const ws = await createWorkspace(t, key, { modelIds: [model.id] });
  const form = multipart([
    { name: 'title', value: 'fuzz fixture' },
    { name: 'files', filename: 'notes.txt', contentType: 'text/plain', data: Buffer.from('Atrium fixture text about invoices and budgets.') },
  ]);
  const plus = await t.request({ method: 'POST', url: '/api/v1/plus', key, ...form });
  if (plus.statusCode !== 200) throw new Error(`plus fixture: ${plus.body}`);
  const chat = await t.request({ method: 'POST', url: `/api/v1/chat/${ws.id}/completions`, key, payload: { prompt: 'hello' } });
  if (chat.statusCode !== 200) throw new Error(`chat fixture: ${chat.body}`);
  const apiKey = await t.request({ method: 'POST', url: '/api/v1/api-keys', key, payload: { name: 'fuzz fixture' } });
  const doc = (await t.request({ method: 'GET', url: '/openapi.json' })).json();
  ctx = {
    schemas: doc.components.schemas,
    ids: [model.id, ws.id, plus.json().id, plus.json().files[0].id, chat.json().threadId],
    idsByName: {
      modelId: model.id,
      modelIds: model.id,
      models: model.id,
      workspaceId: ws.id,
      plusId: plus.json().id,
      plusIds: plus.json().id,
      fileId: plus.json().files[0].id,
      threadId: chat.json().threadId,
      id: apiKey.json().id,
      model: `workspace/${ws.id}`,
    },
    intIds: [member.id],
    urls: [
      standIn.openaiBaseUrl,
      standIn.anthropicBaseUrl,
      'http://127.0.0.1:9/v1',
      'http://169.254.169.254/latest',
      'ftp://127.0.0.1/x',
      'not a url',
      'http://[::1]:9/v1',
    ],
  };
  ops = operationsOf(doc);
  console.log(`fuzz: seed ${SEED}, ${RUNS} runs per operation, ${ops.length} operations (ATRIUM_FUZZ_SEED, ATRIUM_FUZZ_RUNS)`);
}, 120_000);
afterAll(async () => {
  await t?.close();
  await standIn?.close();
});

describe('fuzzing the OpenAPI surface', () => {
  it('covers every operation of the document', () => {
    expect(ops.length).toBeGreaterThan(40);
    expect(ops.filter((o) => o.body?.multipart).length).toBeGreaterThanOrEqual(3);
  });

  it('answers no request drawn from the schemas with a 5xx', { timeout: 600_000 }, async () => {
    for (const [i, op] of ops.entries()) {
      await fc.assert(
        fc.asyncProperty(requestArb(op), async (r) => {
          const res = await t.app.inject(r as InjectOptions);
          check(r, res);
          const counts = seen.get(`${op.method} ${op.path}`) ?? new Map<number, number>();
          counts.set(res.statusCode, (counts.get(res.statusCode) ?? 0) + 1);
          seen.set(`${op.method} ${op.path}`, counts);
        }),
        { seed: SEED + i, numRuns: RUNS, endOnFailure: true },
      );
    }
    const lines = [...seen].map(
      ([op, counts]) =>
        `${op}: ${[...counts]
          .sort(([a], [b]) => a - b)
          .map(([st, n]) => `${st}×${n}`)
          .join(' ')}`,
    );
    console.log(`fuzz answers:\n  ${lines.join('\n  ')}`);
    // A fuzzer that only ever hears 400 tests the validator, not the handlers: most operations
    // must have succeeded at least once.
    const succeeded = [...seen.values()].filter((counts) => [...counts.keys()].some((st) => st < 300)).length;
    expect(succeeded).toBeGreaterThanOrEqual(Math.floor(ops.length * 0.6));
  });

  it('answers a known path asked with any method with no 5xx, and an unknown method with 405 or 404', { timeout: 120_000 }, async () => {
    const paths = [...new Set(ops.map((o) => o.path))];
    const methods = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'QUERY'];
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...paths), fc.constantFrom(...methods), fc.constantFrom(...ctx.ids), async (path, method, id) => {
        const r: FuzzRequest = { method, url: path.replace(/\{[^}]+\}/g, id), headers: { authorization: `Bearer ${key}` } };
        const res = await t.app.inject(r as InjectOptions);
        check(r, res);
        // Declared for this path, or for another path pattern the same URL also matches.
        const declared = ops.some((o) => patternOf(o.path).test(r.url) && (o.method === method || (method === 'HEAD' && o.method === 'GET')));
        if (!declared) {
          expect(res.statusCode).toBe(405);
          expect(res.headers.allow).toBeTruthy();
        }
      }),
      { seed: SEED, numRuns: RUNS * 4 },
    );
  });
});
