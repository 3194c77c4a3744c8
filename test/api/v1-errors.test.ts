/**
 * Refusals a client acts on: the official `openai` SDK, with its automatic retries on, sends a
 * refused call once (the stand-in counts the requests) and the caller gets one prompt-log row.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, startTestApp, type TestApp } from '../helpers/app.js';
import { LEAKED_SECRET } from '../support/standin-provider.js';
import { useStandIn } from '../support/use-standin.js';
import { logsOf, v1Setup } from './v1-helpers.js';

const s = useStandIn();
let t: TestApp;
let baseUrl: string;

beforeAll(async () => {
  t = await startTestApp();
  baseUrl = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await t.close();
});

/** The SDK as clients use it: its default retries (2) on. */
const client = (key: string, maxRetries?: number) => new OpenAI({ baseURL: `${baseUrl}/v1`, apiKey: key, ...(maxRetries !== undefined ? { maxRetries } : {}) });
const chatCalls = () => s.standIn.requests.filter((r) => r.path.endsWith('/chat/completions')).length;

async function refused(key: string, model: string, content: string, stream = false): Promise<InstanceType<typeof OpenAI.APIError>> {
  const err = await (async () => {
    const r = await client(key).chat.completions.create({ model, messages: [{ role: 'user', content }], stream });
    if (stream) for await (const _ of r as AsyncIterable<unknown>) void _;
  })().catch((e: unknown) => e);
  expect(err).toBeInstanceOf(OpenAI.APIError);
  return err as InstanceType<typeof OpenAI.APIError>;
}

describe('a refused call is sent once', () => {
  it.each([
    ['a rejected provider key', { failStatus: 401 }, 502, 'provider_auth_failed', OpenAI.InternalServerError],
    ['a model the provider does not know', { failStatus: 404 }, 404, 'model_not_found', OpenAI.NotFoundError],
    ['a prompt longer than the window', { contextWindow: { tokens: 40, style: 'llamacpp' as const } }, 400, 'context_length_exceeded', OpenAI.BadRequestError],
  ])('%s: plain and streamed, one upstream call and one log row each', async (_name, sw, status, code, cls) => {
    const { team, ws } = await v1Setup(t, s);
    s.standIn.set(sw);
    const prompt = 'far too long for a window of forty tokens, '.repeat(8);
    for (const stream of [false, true]) {
      const before = chatCalls();
      const e = await refused(team.ownerKey, `workspace/${ws.id}`, prompt, stream);
      expect(e).toBeInstanceOf(cls);
      expect(e.status).toBe(status);
      expect(e.code).toBe(code);
      expect(e.headers?.get('x-should-retry')).toBe('false');
      expect(JSON.stringify(e.error)).not.toContain(LEAKED_SECRET);
      expect(chatCalls() - before).toBe(1);
    }
    const logs = await logsOf(t, team.ownerKey);
    expect(
      logs.map((l) => [l.status, l.error, l.prompt.slice(0, 20)]),
      JSON.stringify(logs.map((l) => [l.status, l.error])),
    ).toHaveLength(2);
    expect(logs.every((l) => l.status === 'error')).toBe(true);
  });

  it('a provider failure a retry may cure (500) is retried by the SDK as before', async () => {
    const { team, ws } = await v1Setup(t, s);
    s.standIn.set({ failStatus: 500 });
    const err = (await client(team.ownerKey, 1)
      .chat.completions.create({ model: `workspace/${ws.id}`, messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(err.status).toBe(502);
    expect(err.headers?.get('x-should-retry')).toBeNull();
    expect(chatCalls()).toBe(2);
  });

  it('Atrium\u2019s own 4xx answers say x-should-retry: false too', async () => {
    const { team } = await v1Setup(t, s);
    const api = t.api(team.ownerKey);
    const { response } = await api.POST('/v1/chat/completions', { body: { model: 'workspace/nope', messages: [{ role: 'user', content: 'x' }] } });
    expect(response.status).toBe(404);
    expect(response.headers.get('x-should-retry')).toBe('false');
    const own = await api.GET('/api/v1/workspaces/{workspaceId}', { params: { path: { workspaceId: '00000000-0000-4000-8000-000000000000' } } });
    expectProblem(own, 404);
    expect(own.response.headers.get('x-should-retry')).toBe('false');
  });
});

describe('the older function-calling fields are refused, never dropped', () => {
  it('functions or a function_call: 400 tools_unsupported naming the field, nothing sent or logged', async () => {
    const { team, ws } = await v1Setup(t, s);
    const model = `workspace/${ws.id}`;
    const user = [{ role: 'user', content: 'weather?' }];
    const fn = { name: 'weather', parameters: { type: 'object', properties: {} } };
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ model, messages: user, functions: [fn] }, 'functions'],
      [{ model, messages: user, function_call: { name: 'weather' } }, 'function_call'],
    ];
    for (const [body, param] of cases) {
      for (const stream of [false, true]) {
        const err = await client(team.ownerKey)
          .chat.completions.create({ ...body, stream } as unknown as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming)
          .catch((e: unknown) => e);
        expect(err, param).toBeInstanceOf(OpenAI.BadRequestError);
        const e = err as InstanceType<typeof OpenAI.BadRequestError>;
        expect(e.code).toBe('tools_unsupported');
        expect(e.param).toBe(param);
      }
    }
    expect(chatCalls()).toBe(0);
    // an empty tools array and tool_choice none offer nothing: answered as usual, nothing of tools sent
    const ok = await client(team.ownerKey).chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }], tools: [], tool_choice: 'none' });
    expect(ok.choices[0]!.message.content).toBe('Echo: hi');
    expect(chatCalls()).toBe(1);
    expect(s.standIn.requests[0]!.body.tools).toBeUndefined();
    expect(await logsOf(t, team.ownerKey)).toHaveLength(1);
  });
});

describe('a URL the router cannot decode', () => {
  it('is a 400 in OpenAI\u2019s shape under /v1 (clients parse that), problem+json elsewhere', async () => {
    // raw: URLs that are not validly percent-encoded, which the typed client would encode
    for (const url of ['/v1/models/%ED%A0%', '/v1/chat/completions%']) {
      const res = await t.request({ method: 'GET', url });
      expect(res.statusCode, url).toBe(400);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.json()).toEqual({ error: { message: 'The URL is not validly percent-encoded', type: 'invalid_request_error', param: null, code: 'bad_url' } });
      expect(res.headers['x-request-id']).toBeTruthy();
    }
    const other = await t.request({ method: 'GET', url: '/api/v1/models/%ED%A0%' }); // raw: not validly percent-encoded
    expect(other.statusCode).toBe(400);
    expect(other.headers['content-type']).toMatch(/^application\/problem\+json/);
  });
});
