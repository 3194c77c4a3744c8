/**
 * Failure paths, run against every protocol (OpenAI, Azure OpenAI, Anthropic, Gemini) through the
 * real SDKs talking to the stand-in provider.
 */
import { inspect } from 'node:util';
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { getAdapter, httpStatusFor, ProviderError } from '../../src/providers/index.js';
import { useStandIn } from '../support/use-standin.js';
import { collect, makeRequest, rejectionOf, type TargetSpec } from './_helpers.js';

const s = useStandIn();
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown): void => {
  unhandled.push(reason);
};

beforeAll(() => {
  process.on('unhandledRejection', onUnhandled);
});
afterAll(() => {
  process.off('unhandledRejection', onUnhandled);
});

const LONG = [{ role: 'user' as const, content: 'one two three four five six seven eight nine ten' }];

const targets: Array<[string, () => TargetSpec]> = [
  ['OPENAI', () => s.target('OPENAI')],
  ['AZURE', () => s.target('AZURE')],
  ['ANTHROPIC', () => s.target('ANTHROPIC')],
  ['GOOGLE', () => s.target('GOOGLE')],
];

function expectProviderError(err: unknown, kind: ProviderError['kind']): ProviderError {
  expect(err).toBeInstanceOf(ProviderError);
  const e = err as ProviderError;
  expect(e.kind).toBe(kind);
  return e;
}

function expectNoLeak(err: unknown): void {
  const e = err as ProviderError;
  expect(e.message).not.toContain('LEAKED');
  expect(e.message).not.toContain('secret user prompt');
  expect(JSON.stringify(e)).not.toContain('LEAKED');
  expect(inspect(e, { depth: 10 })).not.toContain('LEAKED');
  expect(String(e.stack)).not.toContain('LEAKED');
}

describe.each(targets)('%s failure paths', (_name, targetOf) => {
  const adapter = () => {
    const t = targetOf();
    return getAdapter(t.apiBase, t.connectionType);
  };

  it('upstream 500 -> upstream_error with a generic message and no leaked body (complete)', async () => {
    s.standIn.set({ failStatus: 500 });
    const err = await rejectionOf(adapter().complete(makeRequest(targetOf())));
    const e = expectProviderError(err, 'upstream_error');
    expect(e.upstreamStatus).toBe(500);
    expect(e.message).toBe('The model provider answered 500');
    expect(e.code).toBe('provider_error');
    expect(e.retryable).toBe(true);
    expect(httpStatusFor(e)).toBe(502);
    expectNoLeak(e);
    expect(s.standIn.requests).toHaveLength(1); // maxRetries: 0 — no SDK retry
  });

  it('upstream 500 -> upstream_error (stream)', async () => {
    s.standIn.set({ failStatus: 500 });
    const r = await collect(adapter().stream(makeRequest(targetOf())));
    const e = expectProviderError(r.error, 'upstream_error');
    expect(e.upstreamStatus).toBe(500);
    expect(r.deltas).toEqual([]);
    expectNoLeak(e);
    expect(s.standIn.requests).toHaveLength(1);
  });

  it('401 -> upstream_auth', async () => {
    s.standIn.set({ failStatus: 401 });
    const e = expectProviderError(await rejectionOf(adapter().complete(makeRequest(targetOf()))), 'upstream_auth');
    expect(e.upstreamStatus).toBe(401);
    expect(e.code).toBe('provider_auth_failed');
    expect(e.retryable).toBe(false);
    expectNoLeak(e);
  });

  it('429 -> upstream_rate_limited (stream)', async () => {
    s.standIn.set({ failStatus: 429 });
    const r = await collect(adapter().stream(makeRequest(targetOf())));
    const e = expectProviderError(r.error, 'upstream_rate_limited');
    expect(e.upstreamStatus).toBe(429);
    expect(e.code).toBe('provider_rate_limited');
    expect(e.retryable).toBe(true);
    expectNoLeak(e);
    expect(s.standIn.requests).toHaveLength(1);
  });

  it('400 -> upstream_error, not retryable', async () => {
    s.standIn.set({ failStatus: 400 });
    const e = expectProviderError(await rejectionOf(adapter().complete(makeRequest(targetOf()))), 'upstream_error');
    expect(e.upstreamStatus).toBe(400);
    expect(e.retryable).toBe(false);
    expectNoLeak(e);
  });

  it('delay beyond totalMs -> timeout, upstream call cancelled (complete)', async () => {
    s.standIn.set({ delayMs: 400 });
    const started = Date.now();
    const err = await rejectionOf(adapter().complete(makeRequest(targetOf(), { timeouts: { totalMs: 100 } })));
    const elapsed = Date.now() - started;
    const e = expectProviderError(err, 'timeout');
    expect(e.code).toBe('provider_timeout');
    expect(httpStatusFor(e)).toBe(504);
    expect(elapsed).toBeGreaterThanOrEqual(90); // a timer never fires early; no upper bound (a loaded machine is slow)
    await s.standIn.waitForAbortedRequests(1);
  });

  it('no response headers within connectMs -> timeout (stream)', async () => {
    s.standIn.set({ delayMs: 400 });
    const r = await collect(adapter().stream(makeRequest(targetOf(), { timeouts: { connectMs: 100 } })));
    expectProviderError(r.error, 'timeout');
    await s.standIn.waitForAbortedRequests(1);
  });

  it('stream that hangs after chunks beyond idleMs -> timeout after the delivered deltas', async () => {
    s.standIn.set({ hangAfterChunks: 2 });
    const r = await collect(adapter().stream(makeRequest(targetOf(), { messages: LONG, timeouts: { idleMs: 150 } })));
    const e = expectProviderError(r.error, 'timeout');
    expect(r.deltas.join('')).toBe('Echo: one');
    expect(r.done).toBeUndefined();
    expect(e.retryable).toBe(false); // content was already delivered
    await s.standIn.waitForAbortedRequests(1);
  });

  it('slow stream beyond totalMs -> timeout mid-stream', async () => {
    s.standIn.set({ chunkDelayMs: 80 });
    const r = await collect(adapter().stream(makeRequest(targetOf(), { messages: LONG, timeouts: { totalMs: 250 } })));
    expectProviderError(r.error, 'timeout');
    expect(r.deltas.length).toBeGreaterThan(0);
    expect(r.deltas.length).toBeLessThan(11);
    await s.standIn.waitForAbortedRequests(1);
  });

  it('broken stream -> ProviderError, not a hang', async () => {
    s.standIn.set({ breakStreamAfter: 2 });
    const r = await collect(adapter().stream(makeRequest(targetOf(), { messages: LONG })));
    expect(r.error).toBeInstanceOf(ProviderError);
    const e = r.error as ProviderError;
    expect(['connection_failed', 'bad_response']).toContain(e.kind);
    expect(e.retryable).toBe(false);
    expect(r.deltas.join('')).toBe('Echo: one');
    expect(r.done).toBeUndefined();
  });

  it('malformed JSON body -> bad_response (complete)', async () => {
    s.standIn.set({ malformed: true });
    const e = expectProviderError(await rejectionOf(adapter().complete(makeRequest(targetOf()))), 'bad_response');
    expect(e.code).toBe('provider_bad_response');
    expect(httpStatusFor(e)).toBe(502);
  });

  it('garbage SSE -> bad_response (stream)', async () => {
    s.standIn.set({ malformed: true });
    const r = await collect(adapter().stream(makeRequest(targetOf())));
    expectProviderError(r.error, 'bad_response');
    expect(r.deltas).toEqual([]);
  });

  it('caller abort mid-stream -> aborted, and the stand-in sees the connection closed', async () => {
    s.standIn.set({ chunkDelayMs: 60 });
    const ac = new AbortController();
    const r = await collect(adapter().stream(makeRequest(targetOf(), { messages: LONG, signal: ac.signal })), (_t, i) => {
      if (i === 0) ac.abort();
    });
    const e = expectProviderError(r.error, 'aborted');
    expect(e.code).toBe('provider_aborted');
    expect(r.deltas).toEqual(['Echo:']);
    expect(r.done).toBeUndefined();
    await s.standIn.waitForAbortedRequests(1);
    expect(s.standIn.abortedRequests).toBe(1);
  });

  it('caller abort while waiting for a non-streaming answer -> aborted, upstream cancelled', async () => {
    s.standIn.set({ delayMs: 1000 });
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 50);
    // No timed assertion: the stand-in seeing the request aborted proves the upstream call was cut.
    const e = expectProviderError(await rejectionOf(adapter().complete(makeRequest(targetOf(), { signal: ac.signal }))), 'aborted');
    expect(e.kind).toBe('aborted');
    await s.standIn.waitForAbortedRequests(1);
  });

  it('already-aborted signal -> aborted without any upstream request', async () => {
    const ac = new AbortController();
    ac.abort();
    expectProviderError(await rejectionOf(adapter().complete(makeRequest(targetOf(), { signal: ac.signal }))), 'aborted');
    const r = await collect(adapter().stream(makeRequest(targetOf(), { signal: ac.signal })));
    expectProviderError(r.error, 'aborted');
    expect(s.standIn.requests).toHaveLength(0);
  });

  it('consumer that stops iterating early cancels the upstream request', async () => {
    s.standIn.set({ chunkDelayMs: 60 });
    const seen: string[] = [];
    for await (const ev of adapter().stream(makeRequest(targetOf(), { messages: LONG }))) {
      if (ev.type === 'delta') seen.push(ev.content);
      if (seen.length === 2) break;
    }
    expect(seen).toEqual(['Echo:', ' one']);
    await s.standIn.waitForAbortedRequests(1);
  });

  it('produced no unhandled rejections', async () => {
    await new Promise((r) => setTimeout(r, 50));
    expect(unhandled).toEqual([]);
  });
});
