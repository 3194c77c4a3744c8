import { describe, it, expect } from 'vitest';
import { DEFAULT_ANTHROPIC_MAX_TOKENS, getAdapter } from '../../src/providers/index.js';
import { anthropicBaseUrl, buildAnthropicBody, normalizeAnthropicStopReason } from '../../src/providers/anthropic.js';
import { useStandIn } from '../support/use-standin.js';
import { collect, EXPECTED_USAGE, makeRequest, type TargetSpec } from './_helpers.js';

const s = useStandIn();

const target = (over: Partial<TargetSpec> = {}): TargetSpec => s.target('ANTHROPIC', over);
const adapter = getAdapter('ANTHROPIC', 'URL');

const ALL_PARAMS = {
  temperature: 0.5,
  topP: 0.9,
  n: 2,
  frequencyPenalty: 0.1,
  presencePenalty: 0.2,
  logitBias: { '1': 5 },
};

describe('Anthropic adapter — complete', () => {
  it('returns the echoed content, finish reason and usage', async () => {
    const res = await adapter.complete(makeRequest(target()));
    expect(res).toEqual({ content: 'Echo: hello there', finishReason: 'stop', usage: EXPECTED_USAGE });
  });

  it('puts system text in the top-level system field, defaults max_tokens, drops unsupported params', async () => {
    await adapter.complete(makeRequest(target(), { params: ALL_PARAMS }));
    const rec = s.standIn.requests[0]!;
    expect(rec.protocol).toBe('anthropic');
    expect(rec.path).toBe('/v1/messages');
    expect(rec.headers.authorization).toBe('Bearer sk-ant-test');
    expect(rec.headers['anthropic-version']).toBeTruthy();
    expect(rec.body).toEqual({
      model: 'claude-test',
      max_tokens: DEFAULT_ANTHROPIC_MAX_TOKENS,
      system: 'You are terse.',
      messages: [{ role: 'user', content: 'hello there' }],
    });
  });

  it('passes maxTokens through and maps max_tokens stop to "length"', async () => {
    const res = await adapter.complete(makeRequest(target(), { params: { maxTokens: 2 } }));
    expect(s.standIn.requests[0]!.body.max_tokens).toBe(2);
    expect(res.content).toBe('Echo: hello');
    expect(res.finishReason).toBe('length');
  });

  it('merges consecutive same-role messages and joins several system messages', async () => {
    await adapter.complete(
      makeRequest(target(), {
        messages: [
          { role: 'system', content: 'Rule one.' },
          { role: 'user', content: 'a' },
          { role: 'user', content: 'b' },
          { role: 'system', content: 'Rule two.' },
          { role: 'assistant', content: 'c' },
          { role: 'assistant', content: 'd' },
          { role: 'user', content: 'e' },
        ],
      }),
    );
    const body = s.standIn.requests[0]!.body;
    expect(body.system).toBe('Rule one.\n\nRule two.');
    expect(body.messages).toEqual([
      { role: 'user', content: 'a\n\nb' },
      { role: 'assistant', content: 'c\n\nd' },
      { role: 'user', content: 'e' },
    ]);
  });

  it('sends no credential headers when the model has no key (never ANTHROPIC_API_KEY from the env)', async () => {
    const saved = process.env.ANTHROPIC_API_KEY;
    process.env.ANTHROPIC_API_KEY = 'env-key-must-not-be-used';
    try {
      const res = await adapter.complete(makeRequest(target({ apiKey: null, url: `${s.standIn.anthropicBaseUrl}/` })));
      expect(res.content).toBe('Echo: hello there');
      const h = s.standIn.requests[0]!.headers;
      expect(h.authorization).toBeUndefined();
      expect(h['x-api-key']).toBeUndefined();
      expect(JSON.stringify(h)).not.toContain('env-key-must-not-be-used');
    } finally {
      if (saved === undefined) delete process.env.ANTHROPIC_API_KEY;
      else process.env.ANTHROPIC_API_KEY = saved;
    }
  });

  it('tolerates a base URL that ends in /v1', async () => {
    const res = await adapter.complete(makeRequest(target({ url: `${s.standIn.anthropicBaseUrl}/v1/` })));
    expect(res.content).toBe('Echo: hello there');
    expect(s.standIn.requests[0]!.path).toBe('/v1/messages');
  });
});

describe('Anthropic adapter — stream', () => {
  it('streams text deltas, then done with finish reason and usage', async () => {
    const r = await collect(adapter.stream(makeRequest(target())));
    expect(r.error).toBeUndefined();
    expect(r.deltas).toEqual(['Echo:', ' hello', ' there']);
    expect(r.done).toEqual({ type: 'done', finishReason: 'stop', usage: EXPECTED_USAGE });
    const rec = s.standIn.requests[0]!;
    expect(rec.body.stream).toBe(true);
    expect(rec.body.system).toBe('You are terse.');
    expect(rec.headers.authorization).toBe('Bearer sk-ant-test');
  });

  it('reports "length" when cut off by maxTokens', async () => {
    const r = await collect(adapter.stream(makeRequest(target(), { params: { maxTokens: 1 } })));
    expect(r.deltas).toEqual(['Echo:']);
    expect(r.done?.finishReason).toBe('length');
    expect(r.done?.usage).toEqual({ promptTokens: 7, completionTokens: 1, totalTokens: 8 });
  });
});

describe('Anthropic mapping helpers', () => {
  it.each([
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['max_tokens', 'length'],
    ['model_context_window_exceeded', 'length'],
    ['tool_use', 'tool_calls'],
    ['refusal', 'content_filter'],
    ['pause_turn', 'other'],
    [null, 'other'],
  ])('stop reason %s -> %s', (raw, expected) => {
    expect(normalizeAnthropicStopReason(raw)).toBe(expected);
  });

  it('base URL normalisation', () => {
    expect(anthropicBaseUrl(null)).toBe('https://api.anthropic.com');
    expect(anthropicBaseUrl('https://gw.example.com/anthropic/v1/')).toBe('https://gw.example.com/anthropic');
    expect(anthropicBaseUrl('https://gw.example.com/anthropic')).toBe('https://gw.example.com/anthropic');
  });

  it('omits system when there is none', () => {
    const body = buildAnthropicBody(makeRequest(target(), { messages: [{ role: 'user', content: 'x' }] }));
    expect(body).toEqual({ model: 'claude-test', max_tokens: 1024, messages: [{ role: 'user', content: 'x' }] });
  });
});
