import { describe, it, expect } from 'vitest';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { ApiError as GoogleApiError } from '@google/genai';
import {
  anthropicAdapter,
  azureOpenaiAdapter,
  classifyProviderError,
  describeForLog,
  getAdapter,
  googleAdapter,
  httpStatusFor,
  isFinalRefusal,
  isSupportedConnection,
  openaiAdapter,
  PROVIDER_ERROR_CODES,
  ProviderError,
  type ProviderErrorKind,
  withoutUpstreamDetail,
} from '../../src/providers/index.js';
import { guardedCall } from '../../src/providers/call-control.js';
import { makeRequest } from './_helpers.js';

const SECRET = 'sk-LEAKED-SECRET-in-body';
const headers = new Headers({ 'content-type': 'application/json' });

function expectKind(err: unknown, kind: ProviderErrorKind, status?: number): ProviderError {
  const e = classifyProviderError(err);
  expect(e).toBeInstanceOf(ProviderError);
  expect(e.kind).toBe(kind);
  expect(e.upstreamStatus).toBe(status);
  expect(e.message).not.toContain('LEAKED');
  return e;
}

describe('classifyProviderError', () => {
  it('OpenAI APIError subclasses by status', () => {
    const body = { message: `bad key ${SECRET}`, type: 'invalid_request_error', code: 'invalid_api_key' };
    const auth = expectKind(OpenAI.APIError.generate(401, { error: body }, undefined, headers), 'upstream_auth', 401);
    expect(auth.upstreamCode).toBe('invalid_api_key');
    expectKind(OpenAI.APIError.generate(403, { error: body }, undefined, headers), 'upstream_auth', 403);
    expectKind(OpenAI.APIError.generate(429, { error: body }, undefined, headers), 'upstream_rate_limited', 429);
    expectKind(OpenAI.APIError.generate(503, { error: body }, undefined, headers), 'upstream_error', 503);
    expectKind(OpenAI.APIError.generate(404, { error: body }, undefined, headers), 'upstream_error', 404);
    expect(classifyProviderError(OpenAI.APIError.generate(500, { error: body }, undefined, headers)).message).toBe('The model provider answered 500');
  });

  it('upstream codes that are not short identifiers are not kept', () => {
    const e = classifyProviderError(OpenAI.APIError.generate(400, { error: { message: 'x', code: `contains spaces ${SECRET}` } }, undefined, headers));
    expect(e.upstreamCode).toBeUndefined();
  });

  it('OpenAI / Anthropic abort, timeout and connection errors', () => {
    expectKind(new OpenAI.APIUserAbortError(), 'aborted');
    expectKind(new OpenAI.APIConnectionTimeoutError(), 'timeout');
    expectKind(new OpenAI.APIConnectionError({ message: `x ${SECRET}` }), 'connection_failed');
    expectKind(new Anthropic.APIUserAbortError(), 'aborted');
    expectKind(new Anthropic.APIConnectionTimeoutError(), 'timeout');
    expectKind(new Anthropic.APIConnectionError({ message: 'x' }), 'connection_failed');
  });

  it('Anthropic APIError by status and in-stream error events by type', () => {
    const body = { type: 'error', error: { type: 'overloaded_error', message: SECRET } };
    expectKind(Anthropic.APIError.generate(529, body, undefined, headers), 'upstream_error', 529);
    expectKind(Anthropic.APIError.generate(401, body, undefined, headers), 'upstream_auth', 401);
    const overloaded = expectKind(new Anthropic.APIError(undefined, body, undefined, headers, 'overloaded_error'), 'upstream_error');
    expect(overloaded.retryable).toBe(true);
    expectKind(new Anthropic.APIError(undefined, body, undefined, headers, 'rate_limit_error'), 'upstream_rate_limited');
  });

  it('Google ApiError by status', () => {
    expectKind(new GoogleApiError({ message: SECRET, status: 403 }), 'upstream_auth', 403);
    expectKind(new GoogleApiError({ message: SECRET, status: 429 }), 'upstream_rate_limited', 429);
    expectKind(new GoogleApiError({ message: SECRET, status: 500 }), 'upstream_error', 500);
  });

  it('fetch / DOM / parse errors', () => {
    const refused = new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) });
    expectKind(refused, 'connection_failed');
    const connectTimeout = new TypeError('fetch failed', {
      cause: Object.assign(new Error('Connect Timeout Error'), { code: 'UND_ERR_CONNECT_TIMEOUT' }),
    });
    expectKind(connectTimeout, 'timeout');
    expectKind(new TypeError('terminated'), 'connection_failed');
    expectKind(new DOMException('This operation was aborted', 'AbortError'), 'aborted');
    expectKind(new DOMException('The operation timed out', 'TimeoutError'), 'timeout');
    expectKind(new SyntaxError(`Unexpected token in JSON ${SECRET}`), 'bad_response');
    expectKind(new Error('Incomplete JSON segment at the end'), 'bad_response');
    expectKind(new Error(`something odd ${SECRET}`), 'upstream_error');
    expectKind('a string', 'upstream_error');
    expectKind(undefined, 'upstream_error');
  });

  it('an unknown model is told from a wrong URL path', () => {
    const gen = (status: number, body: unknown) => OpenAI.APIError.generate(status, body as object, undefined, headers);
    // OpenAI, Azure, Ollama, Anthropic, Gemini naming the model
    expectKind(
      gen(404, { error: { message: 'The model `gpt-x` does not exist', type: 'invalid_request_error', code: 'model_not_found' } }),
      'upstream_model_not_found',
      404,
    );
    expectKind(
      gen(404, { error: { code: 'DeploymentNotFound', message: 'The API deployment for this resource does not exist.' } }),
      'upstream_model_not_found',
      404,
    );
    expectKind(gen(404, { error: 'model "llama9" not found, try pulling it first' }), 'upstream_model_not_found', 404);
    expectKind(
      Anthropic.APIError.generate(404, { type: 'error', error: { type: 'not_found_error', message: 'model: claude-x' } }, undefined, headers),
      'upstream_model_not_found',
      404,
    );
    expectKind(
      new GoogleApiError({
        message: 'got status: 404 Not Found. {"error":{"code":404,"message":"models/gemini-x is not found for API version v1beta","status":"NOT_FOUND"}}',
        status: 404,
      }),
      'upstream_model_not_found',
      404,
    );
    // llama.cpp's router answers an unknown model with a 400
    expectKind(gen(400, { error: { code: 400, message: "model 'qwen-x' not found", type: 'invalid_request_error' } }), 'upstream_model_not_found', 400);
    // a wrong path: a server's generic not-found, which names no model
    expectKind(
      Anthropic.APIError.generate(404, { type: 'error', error: { type: 'not_found_error', message: 'Not Found' } }, undefined, headers),
      'upstream_error',
      404,
    );
    expectKind(
      new GoogleApiError({
        message: 'got status: 404 Not Found. {"error":{"code":404,"message":"Requested entity was not found.","status":"NOT_FOUND"}}',
        status: 404,
      }),
      'upstream_error',
      404,
    );
    expectKind(gen(404, { error: { message: 'File Not Found', type: 'not_found_error', code: 404 } }), 'upstream_error', 404);
    // a 400 about something else is not an unknown model
    expectKind(gen(400, { error: { message: "'temperature' must be at most 2", type: 'invalid_request_error' } }), 'upstream_error', 400);
  });

  it('final refusals: a retry cannot change them', () => {
    const final = (kind: ProviderErrorKind, status?: number) => isFinalRefusal(new ProviderError(kind, 'm', status));
    expect(final('upstream_auth', 401)).toBe(true);
    expect(final('upstream_content_refused', 400)).toBe(true);
    expect(final('upstream_model_not_found', 404)).toBe(true);
    expect(final('upstream_context_length', 400)).toBe(true);
    expect(final('upstream_error', 404)).toBe(true);
    expect(final('upstream_error', 408)).toBe(false);
    expect(final('upstream_error', 503)).toBe(false);
    expect(final('upstream_rate_limited', 429)).toBe(false);
    expect(final('timeout')).toBe(false);
    expect(final('connection_failed')).toBe(false);
  });

  it('llama.cpp: the error `type` is the upstream code (its `code` is the number 400), with its token counts', () => {
    const body = {
      error: { code: 400, message: `exceeds the available context size ${SECRET}`, type: 'exceed_context_size_error', n_prompt_tokens: 4371, n_ctx: 4096 },
    };
    const e = expectKind(OpenAI.APIError.generate(400, body, undefined, headers), 'upstream_context_length', 400);
    expect(e.code).toBe('provider_context_length_exceeded');
    expect(e.upstreamCode).toBe('exceed_context_size_error');
    expect(e).toMatchObject({ promptTokens: 4371, contextLimit: 4096 });
  });

  it('context length as OpenAI, Anthropic and Gemini word it', () => {
    const openai = expectKind(
      OpenAI.APIError.generate(
        400,
        {
          error: {
            message: "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (3976 in the messages, 1024 in the completion).",
            type: 'invalid_request_error',
            param: 'messages',
            code: 'context_length_exceeded',
          },
        },
        undefined,
        headers,
      ),
      'upstream_context_length',
      400,
    );
    expect(openai).toMatchObject({ upstreamCode: 'context_length_exceeded', contextLimit: 4096, promptTokens: 3976 });
    const anthropic = expectKind(
      Anthropic.APIError.generate(
        400,
        { type: 'error', error: { type: 'invalid_request_error', message: 'prompt is too long: 210000 tokens > 200000 maximum' } },
        undefined,
        headers,
      ),
      'upstream_context_length',
      400,
    );
    expect(anthropic).toMatchObject({ upstreamCode: 'invalid_request_error', contextLimit: 200000, promptTokens: 210000 });
    const gemini = expectKind(
      new GoogleApiError({
        message:
          'got status: 400 Bad Request. ' +
          JSON.stringify({
            error: { code: 400, message: 'The input token count (9000) exceeds the maximum number of tokens allowed (8192).', status: 'INVALID_ARGUMENT' },
          }),
        status: 400,
      }),
      'upstream_context_length',
      400,
    );
    expect(gemini).toMatchObject({ upstreamCode: 'INVALID_ARGUMENT', contextLimit: 8192, promptTokens: 9000 });
  });

  it('model not found, content refused and rate limits with Retry-After', () => {
    const missing = expectKind(
      OpenAI.APIError.generate(
        404,
        { error: { message: `The model x does not exist ${SECRET}`, type: 'invalid_request_error', code: 'model_not_found' } },
        undefined,
        headers,
      ),
      'upstream_model_not_found',
      404,
    );
    expect(missing.upstreamCode).toBe('model_not_found');
    expectKind(
      Anthropic.APIError.generate(404, { type: 'error', error: { type: 'not_found_error', message: 'model: x' } }, undefined, headers),
      'upstream_model_not_found',
      404,
    );
    expectKind(
      new GoogleApiError({ message: 'got status: 404 Not Found. {"error":{"code":404,"message":"models/x is not found","status":"NOT_FOUND"}}', status: 404 }),
      'upstream_model_not_found',
      404,
    );
    // A 404 that names no model (a wrong path) stays a generic provider error.
    expectKind(OpenAI.APIError.generate(404, { error: { message: 'Not Found' } }, undefined, headers), 'upstream_error', 404);

    const refused = expectKind(
      OpenAI.APIError.generate(400, { error: { message: `filtered ${SECRET}`, type: 'invalid_request_error', code: 'content_filter' } }, undefined, headers),
      'upstream_content_refused',
      400,
    );
    expect(refused.upstreamCode).toBe('content_filter');

    const limited = expectKind(
      OpenAI.APIError.generate(
        429,
        { error: { message: 'slow down', type: 'requests', code: 'rate_limit_exceeded' } },
        undefined,
        new Headers({ 'retry-after': '7' }),
      ),
      'upstream_rate_limited',
      429,
    );
    expect(limited.retryAfterSeconds).toBe(7);
    const ms = classifyProviderError(
      Anthropic.APIError.generate(
        429,
        { type: 'error', error: { type: 'rate_limit_error', message: 'x' } },
        undefined,
        new Headers({ 'retry-after-ms': '1500' }),
      ),
    );
    expect(ms.retryAfterSeconds).toBe(2);
    const huge = classifyProviderError(OpenAI.APIError.generate(429, { error: {} }, undefined, new Headers({ 'retry-after': '999999' })));
    expect(huge.retryAfterSeconds).toBe(3600);
  });

  it('the log text carries the upstream status and code; members get it without them', () => {
    const e = classifyProviderError(
      OpenAI.APIError.generate(400, { error: { code: 400, type: 'exceed_context_size_error', message: SECRET } }, undefined, headers),
    );
    const text = describeForLog(e);
    expect(text).toBe('provider_context_length_exceeded: The prompt is longer than the model\u2019s context window [upstream 400 exceed_context_size_error]');
    expect(text).not.toContain('LEAKED');
    expect(withoutUpstreamDetail(text)).toBe('provider_context_length_exceeded: The prompt is longer than the model\u2019s context window');
    expect(withoutUpstreamDetail(null)).toBeNull();
  });

  it('returns ProviderErrors unchanged', () => {
    const e = new ProviderError('timeout', 'x');
    expect(classifyProviderError(e)).toBe(e);
  });
});

describe('ProviderError codes and HTTP statuses', () => {
  it.each<[ProviderErrorKind, string, number]>([
    ['upstream_error', 'provider_error', 502],
    ['upstream_auth', 'provider_auth_failed', 502],
    ['upstream_rate_limited', 'provider_rate_limited', 429],
    ['upstream_model_not_found', 'provider_model_not_found', 404],
    ['upstream_context_length', 'provider_context_length_exceeded', 400],
    ['upstream_content_refused', 'provider_content_refused', 502],
    ['timeout', 'provider_timeout', 504],
    ['aborted', 'provider_aborted', 502],
    ['bad_response', 'provider_bad_response', 502],
    ['connection_failed', 'provider_unreachable', 502],
  ])('%s -> %s / %d', (kind, code, status) => {
    const e = new ProviderError(kind, 'm');
    expect(e.code).toBe(code);
    expect(PROVIDER_ERROR_CODES[kind]).toBe(code);
    expect(httpStatusFor(e)).toBe(status);
    expect(e.toJSON()).toMatchObject({ kind, code, message: 'm', retryable: false });
  });
});

describe('getAdapter', () => {
  it('picks the adapter per protocol and connection type', () => {
    expect(getAdapter('OPENAI', 'URL')).toBe(openaiAdapter);
    expect(getAdapter('OPENAI', 'AZURE')).toBe(azureOpenaiAdapter);
    expect(getAdapter('ANTHROPIC', 'URL')).toBe(anthropicAdapter);
    expect(getAdapter('GOOGLE', 'URL')).toBe(googleAdapter);
  });

  it('refuses AZURE for non-OpenAI protocols', () => {
    expect(isSupportedConnection('ANTHROPIC', 'AZURE')).toBe(false);
    expect(isSupportedConnection('OPENAI', 'AZURE')).toBe(true);
    expect(() => getAdapter('GOOGLE', 'AZURE')).toThrow(TypeError);
  });
});

describe('timeouts configuration', () => {
  it('a non-positive / non-finite timeout disables that timer', async () => {
    const req = makeRequest(
      { apiBase: 'OPENAI', connectionType: 'URL', url: 'http://127.0.0.1:1/v1', apiKey: 'k', baseModel: 'm' },
      { timeouts: { connectMs: 0, totalMs: Number.POSITIVE_INFINITY, idleMs: Number.NaN } },
    );
    const result = await guardedCall(req, async () => {
      await new Promise((r) => setTimeout(r, 30));
      return 'ok';
    });
    expect(result).toBe('ok');
  });

  it('totalMs bounds a call that never settles', async () => {
    const req = makeRequest(
      { apiBase: 'OPENAI', connectionType: 'URL', url: 'http://127.0.0.1:1/v1', apiKey: 'k', baseModel: 'm' },
      { timeouts: { totalMs: 50 } },
    );
    let seenSignal: AbortSignal | undefined;
    const err = await guardedCall(req, (signal) => {
      seenSignal = signal;
      return new Promise<never>(() => {});
    }).catch((e: unknown) => e);
    expect((err as ProviderError).kind).toBe('timeout');
    expect(seenSignal?.aborted).toBe(true);
  });
});
