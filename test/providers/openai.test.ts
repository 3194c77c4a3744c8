import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it, expect } from 'vitest';
import { getAdapter, ProviderError } from '../../src/providers/index.js';
import { normalizeOpenAIFinishReason } from '../../src/providers/openai.js';
import { useStandIn } from '../support/use-standin.js';
import { collect, EXPECTED_USAGE, makeRequest, rejectionOf, type TargetSpec } from './_helpers.js';

const s = useStandIn();

const target = (over: Partial<TargetSpec> = {}): TargetSpec => s.target('OPENAI', over);
const adapter = getAdapter('OPENAI', 'URL');

describe('OpenAI adapter — complete', () => {
  it('returns the echoed content, finish reason and usage', async () => {
    const res = await adapter.complete(makeRequest(target()));
    expect(res).toEqual({ content: 'Echo: hello there', finishReason: 'stop', usage: EXPECTED_USAGE });
  });

  it('sends system messages inline, maps every parameter and authenticates with a Bearer key', async () => {
    await adapter.complete(
      makeRequest(target(), {
        params: {
          temperature: 0.5,
          topP: 0.9,
          maxTokens: 50,
          n: 1,
          frequencyPenalty: 0.1,
          presencePenalty: 0.2,
          logitBias: { '50256': -100 },
        },
      }),
    );
    expect(s.standIn.requests).toHaveLength(1);
    const rec = s.standIn.requests[0]!;
    expect(rec.protocol).toBe('openai');
    expect(rec.path).toBe('/v1/chat/completions');
    expect(rec.headers.authorization).toBe('Bearer sk-test-openai');
    expect(rec.body).toMatchObject({
      model: 'gpt-test',
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'user', content: 'hello there' },
      ],
      temperature: 0.5,
      top_p: 0.9,
      max_tokens: 50, // not api.openai.com -> the widely supported field
      n: 1,
      frequency_penalty: 0.1,
      presence_penalty: 0.2,
      logit_bias: { '50256': -100 },
    });
    expect(rec.body.stream).toBeUndefined();
    expect(rec.body.max_completion_tokens).toBeUndefined();
  });

  it('omits null / absent parameters', async () => {
    await adapter.complete(makeRequest(target(), { params: { temperature: null, topP: undefined, logitBias: null } }));
    const body = s.standIn.requests[0]!.body;
    expect(Object.keys(body).sort()).toEqual(['messages', 'model']);
  });

  it('maps a max-tokens cut-off to finish reason "length"', async () => {
    const res = await adapter.complete(makeRequest(target(), { params: { maxTokens: 2 } }));
    expect(res.content).toBe('Echo: hello');
    expect(res.finishReason).toBe('length');
    expect(res.usage.completionTokens).toBe(2);
  });

  it('returns only choice 0 when n > 1', async () => {
    const res = await adapter.complete(makeRequest(target(), { params: { n: 3 } }));
    expect(s.standIn.requests[0]!.body.n).toBe(3);
    expect(res.content).toBe('Echo: hello there');
  });

  it('sends no Authorization header when the model has no key (never OPENAI_API_KEY from the env)', async () => {
    const saved = process.env.OPENAI_API_KEY;
    process.env.OPENAI_API_KEY = 'env-key-must-not-be-used';
    try {
      const res = await adapter.complete(makeRequest(target({ apiKey: null, url: `${s.standIn.openaiBaseUrl}/` })));
      expect(res.content).toBe('Echo: hello there');
      expect(s.standIn.requests[0]!.headers.authorization).toBeUndefined();
      expect(JSON.stringify(s.standIn.requests[0]!.headers)).not.toContain('env-key-must-not-be-used');
    } finally {
      if (saved === undefined) delete process.env.OPENAI_API_KEY;
      else process.env.OPENAI_API_KEY = saved;
    }
  });

  it('honours the reply override switch', async () => {
    s.standIn.set({ reply: 'Fixed answer' });
    const res = await adapter.complete(makeRequest(target()));
    expect(res.content).toBe('Fixed answer');
  });
});

describe('OpenAI adapter — stream', () => {
  it('streams word deltas, then done with finish reason and usage', async () => {
    const r = await collect(adapter.stream(makeRequest(target())));
    expect(r.error).toBeUndefined();
    expect(r.deltas).toEqual(['Echo:', ' hello', ' there']);
    expect(r.done).toEqual({ type: 'done', finishReason: 'stop', usage: EXPECTED_USAGE });
    const body = s.standIn.requests[0]!.body;
    expect(body.stream).toBe(true);
    expect(body.stream_options).toEqual({ include_usage: true });
    expect(s.standIn.requests[0]!.headers.authorization).toBe('Bearer sk-test-openai');
  });

  it('ignores deltas of choices other than 0', async () => {
    const r = await collect(adapter.stream(makeRequest(target(), { params: { n: 2 } })));
    expect(r.deltas.join('')).toBe('Echo: hello there');
    expect(r.done?.finishReason).toBe('stop');
  });

  it('reports "length" when cut off by maxTokens', async () => {
    const r = await collect(adapter.stream(makeRequest(target(), { params: { maxTokens: 1 } })));
    expect(r.deltas).toEqual(['Echo:']);
    expect(r.done?.finishReason).toBe('length');
    expect(r.done?.usage.completionTokens).toBe(1);
  });
});

describe('OpenAI adapter — transport', () => {
  it('does not follow redirects (a redirect could point at an internal address)', async () => {
    let redirectTargetHits = 0;
    const internal = http.createServer((_q, r) => {
      redirectTargetHits++;
      r.end('{}');
    });
    await new Promise<void>((ok) => internal.listen(0, '127.0.0.1', ok));
    const internalPort = (internal.address() as AddressInfo).port;
    const redirector = http.createServer((_q, r) => {
      r.writeHead(307, { location: `http://127.0.0.1:${internalPort}/v1/chat/completions` });
      r.end();
    });
    await new Promise<void>((ok) => redirector.listen(0, '127.0.0.1', ok));
    const port = (redirector.address() as AddressInfo).port;
    try {
      const err = await rejectionOf(adapter.complete(makeRequest(target({ url: `http://127.0.0.1:${port}/v1` }))));
      expect(err).toBeInstanceOf(ProviderError);
      expect((err as ProviderError).kind).toBe('upstream_error');
      expect((err as ProviderError).upstreamStatus).toBe(307);
      expect(redirectTargetHits).toBe(0);
    } finally {
      redirector.closeAllConnections();
      internal.closeAllConnections();
      await Promise.all([new Promise((ok) => redirector.close(ok)), new Promise((ok) => internal.close(ok))]);
    }
  });

  it('connection refused -> connection_failed (provider_unreachable)', async () => {
    const tmp = http.createServer();
    await new Promise<void>((ok) => tmp.listen(0, '127.0.0.1', ok));
    const port = (tmp.address() as AddressInfo).port;
    await new Promise((ok) => tmp.close(ok));
    const err = await rejectionOf(adapter.complete(makeRequest(target({ url: `http://127.0.0.1:${port}/v1` }))));
    expect(err).toBeInstanceOf(ProviderError);
    expect((err as ProviderError).kind).toBe('connection_failed');
    expect((err as ProviderError).code).toBe('provider_unreachable');
    expect((err as ProviderError).retryable).toBe(true);
    const r = await collect(adapter.stream(makeRequest(target({ url: `http://127.0.0.1:${port}/v1` }))));
    expect((r.error as ProviderError).kind).toBe('connection_failed');
  });
});

describe('normalizeOpenAIFinishReason', () => {
  it.each([
    ['stop', 'stop'],
    ['length', 'length'],
    ['content_filter', 'content_filter'],
    ['tool_calls', 'tool_calls'],
    ['function_call', 'tool_calls'],
    ['something_new', 'other'],
    [null, 'other'],
  ])('%s -> %s', (raw, expected) => {
    expect(normalizeOpenAIFinishReason(raw)).toBe(expected);
  });
});
