import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rerank, rerankUrl, supportsRerank } from '../../src/providers/rerank.js';
import { ProviderError } from '../../src/providers/errors.js';

/** A real server on loopback that answers each rerank request with the next scripted reply. */
let server: Server;
let base = '';
const seen: Array<{ url: string; auth: string | undefined; body: Record<string, unknown> }> = [];
let reply: { status: number; body: string; headers?: Record<string, string> } = { status: 200, body: '{}' };

beforeAll(async () => {
  server = createServer((req, res) => {
    let data = '';
    req.on('data', (c: Buffer) => (data += c.toString('utf8')));
    req.on('end', () => {
      seen.push({ url: req.url ?? '', auth: req.headers.authorization, body: JSON.parse(data || '{}') as Record<string, unknown> });
      res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
      res.end(reply.body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const timeouts = { connectMs: 5_000, totalMs: 5_000, idleMs: 5_000 };
const call = (apiKey: string | null = 'rk-1') =>
  rerank({
    target: { apiBase: 'OPENAI', connectionType: 'URL', url: base, apiKey, baseModel: 'bge-reranker' },
    query: 'where are the keys?',
    documents: ['a', 'b', 'c'],
    topN: 3,
    timeouts,
  });
const failure = async (p: Promise<unknown>) => {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ProviderError);
  return err as ProviderError;
};

describe('rerank adapter', () => {
  it('posts {model, query, documents, top_n} to {url}/rerank with the key, and returns the results best first', async () => {
    reply = {
      status: 200,
      body: JSON.stringify({
        results: [
          { index: 2, relevance_score: 0.2 },
          { index: 0, relevance_score: 0.9 },
        ],
      }),
    };
    expect(await call()).toEqual([
      { index: 0, relevanceScore: 0.9 },
      { index: 2, relevanceScore: 0.2 },
    ]);
    expect(seen.at(-1)).toEqual({
      url: '/v1/rerank',
      auth: 'Bearer rk-1',
      body: { model: 'bge-reranker', query: 'where are the keys?', documents: ['a', 'b', 'c'], top_n: 3 },
    });
    await call(null);
    expect(seen.at(-1)!.auth).toBeUndefined();
    // TEI's own answer names the score `score`
    reply = { status: 200, body: '{"results": [{"index": 1, "score": 3.5}]}' };
    expect(await call()).toEqual([{ index: 1, relevanceScore: 3.5 }]);
  });

  it('an answer it cannot use is provider_bad_response; a refusal is classified by status, without the upstream text', async () => {
    for (const body of ['not json', '{"results": [{"index": 3, "relevance_score": 1}]}', '{"results": [{"index": 0}]}', '{"data": []}']) {
      reply = { status: 200, body };
      expect((await failure(call())).code).toBe('provider_bad_response');
    }
    reply = { status: 401, body: '{"error": {"message": "secret-upstream-text", "code": "invalid_api_key"}}' };
    const auth = await failure(call());
    expect(auth.code).toBe('provider_auth_failed');
    expect(auth.message).not.toContain('secret-upstream-text');
    reply = { status: 429, body: '{}', headers: { 'retry-after': '7' } };
    const limited = await failure(call());
    expect(limited.code).toBe('provider_rate_limited');
    expect(limited.retryAfterSeconds).toBe(7);
  });

  it('only an OPENAI URL model can rerank; the endpoint is {url}/rerank', () => {
    expect(supportsRerank({ apiBase: 'OPENAI', connectionType: 'URL' })).toBe(true);
    expect(supportsRerank({ apiBase: 'OPENAI', connectionType: 'AZURE' })).toBe(false);
    expect(supportsRerank({ apiBase: 'GOOGLE', connectionType: 'URL' })).toBe(false);
    expect(rerankUrl('http://h/v1//')).toBe('http://h/v1/rerank');
  });
});
