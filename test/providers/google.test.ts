import { describe, it, expect } from 'vitest';
import { getAdapter } from '../../src/providers/index.js';
import { googleBaseUrl, normalizeGeminiFinishReason } from '../../src/providers/google.js';
import { useStandIn } from '../support/use-standin.js';
import { collect, EXPECTED_USAGE, makeRequest, type TargetSpec } from './_helpers.js';

const s = useStandIn();

const target = (over: Partial<TargetSpec> = {}): TargetSpec => s.target('GOOGLE', over);
const adapter = getAdapter('GOOGLE', 'URL');

describe('Gemini adapter — complete', () => {
  it('returns the echoed content, finish reason and usage', async () => {
    const res = await adapter.complete(makeRequest(target()));
    expect(res).toEqual({ content: 'Echo: hello there', finishReason: 'stop', usage: EXPECTED_USAGE });
  });

  it('uses systemInstruction, role "model", generationConfig params and x-goog-api-key', async () => {
    await adapter.complete(
      makeRequest(target(), {
        messages: [
          { role: 'system', content: 'You are terse.' },
          { role: 'user', content: 'hi' },
          { role: 'assistant', content: 'hello' },
          { role: 'user', content: 'hello there' },
        ],
        params: {
          temperature: 0.5,
          topP: 0.9,
          maxTokens: 50,
          n: 1,
          frequencyPenalty: 0.1,
          presencePenalty: 0.2,
          logitBias: { '1': 5 },
        },
      }),
    );
    const rec = s.standIn.requests[0]!;
    expect(rec.protocol).toBe('gemini');
    expect(rec.path).toBe('/v1beta/models/gemini-test:generateContent');
    expect(rec.headers['x-goog-api-key']).toBe('gemini-key');
    expect(rec.body.contents).toEqual([
      { role: 'user', parts: [{ text: 'hi' }] },
      { role: 'model', parts: [{ text: 'hello' }] },
      { role: 'user', parts: [{ text: 'hello there' }] },
    ]);
    expect(JSON.stringify(rec.body.contents)).not.toContain('You are terse.');
    expect(rec.body.systemInstruction.parts).toEqual([{ text: 'You are terse.' }]);
    expect(rec.body.generationConfig).toEqual({
      temperature: 0.5,
      topP: 0.9,
      maxOutputTokens: 50,
      candidateCount: 1,
      presencePenalty: 0.2,
      frequencyPenalty: 0.1,
    });
    expect(JSON.stringify(rec.body)).not.toContain('logit');
  });

  it('maps MAX_TOKENS to "length"', async () => {
    const res = await adapter.complete(makeRequest(target(), { params: { maxTokens: 2 } }));
    expect(res.content).toBe('Echo: hello');
    expect(res.finishReason).toBe('length');
    expect(res.usage.completionTokens).toBe(2);
  });

  it('returns only candidate 0 when candidateCount > 1', async () => {
    const res = await adapter.complete(makeRequest(target(), { params: { n: 2 } }));
    expect(s.standIn.requests[0]!.body.generationConfig.candidateCount).toBe(2);
    expect(res.content).toBe('Echo: hello there');
  });

  it('sends no key header when the model has no key (and never a key from the environment)', async () => {
    const saved = process.env.GEMINI_API_KEY;
    process.env.GEMINI_API_KEY = 'env-key-must-not-be-used';
    try {
      const res = await adapter.complete(makeRequest(target({ apiKey: null, baseModel: 'gemini-nokey' })));
      expect(res.content).toBe('Echo: hello there');
      expect(s.standIn.requests[0]!.headers['x-goog-api-key']).toBeUndefined();
      expect(JSON.stringify(s.standIn.requests[0]!.headers)).not.toContain('env-key-must-not-be-used');
    } finally {
      if (saved === undefined) delete process.env.GEMINI_API_KEY;
      else process.env.GEMINI_API_KEY = saved;
    }
  });

  it('accepts a URL ending in /v1beta and uses it as the API version', async () => {
    const res = await adapter.complete(makeRequest(target({ url: `${s.standIn.geminiBaseUrl}/v1beta/` })));
    expect(res.content).toBe('Echo: hello there');
    expect(s.standIn.requests[0]!.path).toBe('/v1beta/models/gemini-test:generateContent');
  });
});

describe('Gemini adapter — stream', () => {
  it('streams via :streamGenerateContent?alt=sse with deltas, finish reason and usage', async () => {
    const r = await collect(adapter.stream(makeRequest(target())));
    expect(r.error).toBeUndefined();
    expect(r.deltas).toEqual(['Echo:', ' hello', ' there']);
    expect(r.done).toEqual({ type: 'done', finishReason: 'stop', usage: EXPECTED_USAGE });
    const rec = s.standIn.requests[0]!;
    expect(rec.path).toBe('/v1beta/models/gemini-test:streamGenerateContent?alt=sse');
    expect(rec.headers['x-goog-api-key']).toBe('gemini-key');
    expect(rec.body.systemInstruction.parts).toEqual([{ text: 'You are terse.' }]);
  });

  it('ignores candidates other than 0', async () => {
    const r = await collect(adapter.stream(makeRequest(target(), { params: { n: 2 } })));
    expect(r.deltas.join('')).toBe('Echo: hello there');
  });
});

describe('Gemini mapping helpers', () => {
  it.each([
    ['STOP', 'stop'],
    ['MAX_TOKENS', 'length'],
    ['CONTINUATION', 'length'],
    ['SAFETY', 'content_filter'],
    ['RECITATION', 'content_filter'],
    ['PROHIBITED_CONTENT', 'content_filter'],
    ['MALFORMED_FUNCTION_CALL', 'other'],
    ['OTHER', 'other'],
    [undefined, 'other'],
  ])('finish reason %s -> %s', (raw, expected) => {
    expect(normalizeGeminiFinishReason(raw)).toBe(expected);
  });

  it('base URL normalisation', () => {
    expect(googleBaseUrl(null)).toEqual({ baseUrl: 'https://generativelanguage.googleapis.com', apiVersion: undefined });
    expect(googleBaseUrl('https://gw.example.com/gemini/v1/')).toEqual({ baseUrl: 'https://gw.example.com/gemini', apiVersion: 'v1' });
    expect(googleBaseUrl('https://gw.example.com/gemini')).toEqual({ baseUrl: 'https://gw.example.com/gemini', apiVersion: undefined });
  });
});
