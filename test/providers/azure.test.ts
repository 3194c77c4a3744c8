import { describe, it, expect } from 'vitest';
import { DEFAULT_AZURE_API_VERSION, getAdapter, parseAzureUrl, ProviderError } from '../../src/providers/index.js';
import { useStandIn } from '../support/use-standin.js';
import { collect, EXPECTED_USAGE, makeRequest, rejectionOf, type TargetSpec } from './_helpers.js';

const s = useStandIn();

const target = (over: Partial<TargetSpec> = {}): TargetSpec => s.target('AZURE', over);
const adapter = getAdapter('OPENAI', 'AZURE');

describe('Azure OpenAI adapter', () => {
  it('complete: endpoint URL + deployment = baseModel, api-key header, default api-version', async () => {
    const res = await adapter.complete(makeRequest(target(), { params: { maxTokens: 40, temperature: 0.3 } }));
    expect(res).toEqual({ content: 'Echo: hello there', finishReason: 'stop', usage: EXPECTED_USAGE });
    const rec = s.standIn.requests[0]!;
    expect(rec.protocol).toBe('azure');
    expect(rec.path).toBe(`/openai/deployments/my-deployment/chat/completions?api-version=${DEFAULT_AZURE_API_VERSION}`);
    expect(rec.headers['api-key']).toBe('azure-key-1');
    expect(rec.headers.authorization).toBeUndefined();
    expect(rec.body.messages[0]).toEqual({ role: 'system', content: 'You are terse.' });
    expect(rec.body.max_completion_tokens).toBe(40);
    expect(rec.body.max_tokens).toBeUndefined();
    expect(rec.body.temperature).toBe(0.3);
  });

  it('stream: deltas, finish reason and usage', async () => {
    const r = await collect(adapter.stream(makeRequest(target())));
    expect(r.error).toBeUndefined();
    expect(r.deltas).toEqual(['Echo:', ' hello', ' there']);
    expect(r.done).toEqual({ type: 'done', finishReason: 'stop', usage: EXPECTED_USAGE });
    expect(s.standIn.requests[0]!.body.stream_options).toEqual({ include_usage: true });
  });

  it('accepts the full deployment URL with its own api-version', async () => {
    const url = `${s.standIn.url}/openai/deployments/other-dep?api-version=2025-01-01-preview`;
    const res = await adapter.complete(makeRequest(target({ url, baseModel: 'ignored-for-routing' })));
    expect(res.content).toBe('Echo: hello there');
    expect(s.standIn.requests[0]!.path).toBe('/openai/deployments/other-dep/chat/completions?api-version=2025-01-01-preview');
  });

  it('accepts the Azure "v1" API form (no api-version, model in the body)', async () => {
    const r = await collect(adapter.stream(makeRequest(target({ url: s.standIn.azureV1BaseUrl, baseModel: 'gpt-4o-mini' }))));
    expect(r.deltas.join('')).toBe('Echo: hello there');
    const rec = s.standIn.requests[0]!;
    expect(rec.path).toBe('/openai/v1/chat/completions');
    expect(rec.headers['api-key']).toBe('azure-key-1');
    expect(rec.headers.authorization).toBeUndefined();
    expect(rec.body.model).toBe('gpt-4o-mini');
  });

  it('missing key -> the stand-in answers 401 -> upstream_auth', async () => {
    const err = await rejectionOf(adapter.complete(makeRequest(target({ apiKey: null }))));
    expect(err).toBeInstanceOf(ProviderError);
    expect((err as ProviderError).kind).toBe('upstream_auth');
    expect(s.standIn.requests[0]!.headers['api-key']).toBeUndefined();
  });
});

describe('parseAzureUrl', () => {
  it.each([
    ['https://res.openai.azure.com', { baseURL: 'https://res.openai.azure.com/openai', apiVersion: DEFAULT_AZURE_API_VERSION, deployment: 'dep', v1: false }],
    ['https://res.openai.azure.com/', { baseURL: 'https://res.openai.azure.com/openai', apiVersion: DEFAULT_AZURE_API_VERSION, deployment: 'dep', v1: false }],
    [
      'https://res.openai.azure.com/openai?api-version=2024-06-01',
      { baseURL: 'https://res.openai.azure.com/openai', apiVersion: '2024-06-01', deployment: 'dep', v1: false },
    ],
    [
      'https://res.openai.azure.com/openai/deployments/gpt4o/chat/completions?api-version=2024-08-01-preview',
      { baseURL: 'https://res.openai.azure.com/openai/deployments/gpt4o', apiVersion: '2024-08-01-preview', deployment: undefined, v1: false },
    ],
    ['https://res.openai.azure.com/openai/v1/', { baseURL: 'https://res.openai.azure.com/openai/v1', apiVersion: null, deployment: undefined, v1: true }],
  ])('%s', (url, expected) => {
    expect(parseAzureUrl(url, 'dep')).toEqual(expected);
  });
});
