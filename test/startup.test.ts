import { describe, expect, it } from 'vitest';
import { lazySerializers } from '../src/http/lazy-serializers.js';
import { validatorCompiler } from '../src/http/validation.js';
import { countTokens, encodeTokens, preloadTokenizer, tokenizerLoaded } from '../src/ingest/tokens.js';
import { startTestApp } from './helpers/app.js';

describe('start-up work', () => {
  it('builds the app without loading the tokenizer, which loads on first use with the same counts', async () => {
    const t = await startTestApp();
    try {
      expect(tokenizerLoaded()).toBe(false);
      expect(countTokens('')).toBe(0);
      expect(tokenizerLoaded()).toBe(false);
      // o200k_base: "hello world" is two tokens; special-token text counts as ordinary text.
      expect(encodeTokens('hello world')).toEqual([24912, 2375]);
      expect(tokenizerLoaded()).toBe(true);
      expect(countTokens('<|endoftext|>')).toBeGreaterThan(1);
      preloadTokenizer();
      expect(countTokens('hello world')).toBe(2);
    } finally {
      await t.close();
    }
  }, 120_000);
});

describe('lazy response serializers', () => {
  const Item = { $id: 'Item', type: 'object', properties: { id: { type: 'integer' }, name: { type: 'string' } }, required: ['id'] };
  /** Let the warm-up's event-loop turns run (each compiles one serializer). */
  const turns = async (n: number) => {
    for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
  };
  const route = (method: string, schema: unknown) => ({ method, url: '/items', httpStatus: '200', schema });

  it('compile on first use with the shared schemas, as Fastify would, and warm the rest in the background', async () => {
    const s = lazySerializers();
    const compile = s.buildSerializer({ Item }, {});
    const one = compile(route('GET', { $ref: 'Item#' }));
    const list = compile(route('POST', { type: 'array', items: { $ref: 'Item#' } }));
    compile(route('HEAD', { $ref: 'Item#' }));
    expect(s.pending()).toBe(2); // HEAD routes are left to their first request
    // fast-json-stringify semantics: unknown fields dropped, declared ones kept.
    expect(JSON.parse(one({ id: 1, name: 'a', secret: 'x' }))).toEqual({ id: 1, name: 'a' });
    expect(s.pending()).toBe(1);
    s.warm();
    await turns(3);
    expect(s.pending()).toBe(0);
    expect(JSON.parse(list([{ id: 2, extra: true }]))).toEqual([{ id: 2 }]);
  });

  it('a schema that cannot compile fails its own responses, not the warm-up', async () => {
    const s = lazySerializers();
    const compile = s.buildSerializer({}, {});
    const broken = compile(route('GET', { $ref: 'Missing#' }));
    const fine = compile(route('GET', { type: 'object', properties: { ok: { type: 'boolean' } } }));
    s.warm();
    await turns(3);
    expect(s.pending()).toBe(0);
    expect(() => broken({})).toThrow();
    expect(fine({ ok: true })).toBe('{"ok":true}');
  });
});

describe('lazy request validators', () => {
  const turns = async (n: number) => {
    for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
  };
  const schema = { type: 'object', properties: { n: { type: 'integer', minimum: 1 } }, required: ['n'] };
  type Compiled = ((data: unknown) => boolean) & { errors?: Array<{ instancePath: string; message?: string }> | null };
  const compileFor = (v: ReturnType<typeof validatorCompiler>, httpPart: string) =>
    v.compiler({ schema, httpPart, method: 'POST', url: '/x' } as never) as Compiled;

  it('compile on first call with the same rules (strict bodies, coerced query strings) and report errors as Fastify reads them', async () => {
    const v = validatorCompiler();
    const body = compileFor(v, 'body');
    const query = compileFor(v, 'querystring');
    expect(v.pending()).toBe(2);
    expect(body({ n: '2' })).toBe(false); // a string is not coerced in a body
    expect(body.errors?.[0]?.instancePath).toBe('/n');
    expect(v.pending()).toBe(1);
    expect(body({ n: 2 })).toBe(true);
    const q: Record<string, unknown> = { n: '2' };
    v.warm();
    await turns(3);
    expect(v.pending()).toBe(0);
    expect(query(q)).toBe(true);
    expect(q.n).toBe(2); // coerced in place, as Ajv does
    expect(query({})).toBe(false);
    expect(query.errors?.[0]?.message).toMatch(/must have required property/);
  });

  it('multipart bodies are left to the route', () => {
    const v = validatorCompiler();
    const f = v.compiler({ schema: { 'x-multipart': true, type: 'object' }, httpPart: 'body', method: 'POST', url: '/x' } as never) as Compiled;
    expect(f('anything')).toBe(true);
    expect(v.pending()).toBe(0);
  });
});
