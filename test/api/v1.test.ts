/**
 * The OpenAI-compatible API, driven by real clients (the official `openai` SDK and the
 * Vercel AI SDK) against the running server and the stand-in provider; each call's prompt log is
 * checked afterwards through /api/v1.
 */
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateText, streamText } from 'ai';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { OpenAIChatCompletion, OpenAIChatCompletionChunk, OpenAIError, OpenAIModelList } from '../../src/modules/openai-compat/schema.js';
import { expectStatus, type ApiResult, type paths } from '../helpers/api.js';
import { newTeam, startTestApp, type TestApp } from '../helpers/app.js';
import { createModel, createWorkspace } from '../helpers/factories.js';
import { expectShape } from '../helpers/shape.js';
import { LEAKED_SECRET } from '../support/standin-provider.js';
import { useStandIn } from '../support/use-standin.js';
import { logsOf, sdk, threadsOf, v1Setup } from './v1-helpers.js';

const s = useStandIn();
let t: TestApp;
let baseUrl: string;

beforeAll(async () => {
  t = await startTestApp({ providerTimeouts: { connectMs: 2000, totalMs: 5000, idleMs: 2000 } });
  baseUrl = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await t.close();
});

const setup = (ws: Record<string, unknown> = {}, model: Record<string, unknown> = {}) => v1Setup(t, s, ws, model);

type V1Chat = paths['/v1/chat/completions']['post']['requestBody']['content']['application/json'];

/** A chat completion through the typed client; the body comes back as text (JSON, or the event stream). */
const chat = (key: string, body: V1Chat) => t.api(key).POST('/v1/chat/completions', { body, parseAs: 'text' });
const textOf = (res: { data?: unknown }) => res.data as string;

/** A body or media type the document refuses, sent as its bytes. */
async function postRaw(key: string | null, body: unknown, headers: Record<string, string> = { 'content-type': 'application/json' }) {
  // raw: bodies and media types the document does not allow
  return fetch(`${baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** The `data:` payloads of an OpenAI-style stream, `[DONE]` kept as the string. */
function dataLines(text: string): Array<Record<string, unknown> | '[DONE]'> {
  return text
    .split('\n')
    .filter((l) => l.startsWith('data: '))
    .map((l) => l.slice(6))
    .map((d) => (d === '[DONE]' ? '[DONE]' : (JSON.parse(d) as Record<string, unknown>)));
}

/** An OpenAI-shaped error, from fetch or the typed client (whose `error` is the text read, with parseAs: 'text'). */
async function expectOpenAIError(res: Response | ApiResult, status: number, code?: string | null) {
  const response = res instanceof Response ? res : res.response;
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  const raw = res instanceof Response ? await res.json() : typeof res.error === 'string' ? JSON.parse(res.error) : res.error;
  const body = expectShape(OpenAIError, raw);
  if (code !== undefined) expect(body.error.code).toBe(code);
  return body.error;
}

describe('GET /v1/models', () => {
  it('lists each visible workspace and each of its models, and nothing of other teams or private workspaces', async () => {
    const { team, model, ws } = await setup();
    const m2 = await createModel(t, team.ownerKey, { ...s.modelBody('OPENAI'), name: 'second' });
    const ws2 = await createWorkspace(t, team.ownerKey, { modelIds: [m2.id, model.id], name: 'Two' });
    const member = await team.addUser('member');
    const hidden = await createWorkspace(t, member.key, { modelIds: [model.id], sharingType: 'PRIVATE' });
    const other = await setup();

    const list = await sdk(baseUrl, team.ownerKey).models.list();
    const ids = list.data.map((m) => m.id);
    expect(ids).toEqual([
      `workspace/${ws.id}`,
      `workspace/${ws.id}/${model.id}`,
      `workspace/${ws2.id}`,
      `workspace/${ws2.id}/${m2.id}`,
      `workspace/${ws2.id}/${model.id}`,
    ]);
    expect(list.data[2]).toMatchObject({
      object: 'model',
      owned_by: 'atrium',
      atrium: { workspaceId: ws2.id, workspaceName: 'Two', modelId: m2.id, modelName: 'second' },
    });
    expect(ids.join()).not.toContain(hidden.id);
    expect(ids.join()).not.toContain(other.ws.id);
    // the member sees their private workspace
    const listed = expectStatus(await t.api(member.key).GET('/v1/models'), 200);
    expect(expectShape(OpenAIModelList, listed).data.map((m) => m.id)).toContain(`workspace/${hidden.id}`);
  });

  it('refuses a missing or unknown key with 401 in OpenAI\u2019s shape (the SDK raises AuthenticationError)', async () => {
    await expectOpenAIError(await t.api().GET('/v1/models'), 401, 'missing_api_key');
    const err = await sdk(baseUrl, 'atr_wrong')
      .models.list()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.AuthenticationError);
    expect((err as InstanceType<typeof OpenAI.APIError>).code).toBe('invalid_api_key');
  });
});

describe('POST /v1/chat/completions with the openai SDK', () => {
  it('answers a plain completion, keeps no thread, and logs the call under the caller', async () => {
    const { team, model, ws } = await setup();
    const member = await team.addUser('member');
    const client = sdk(baseUrl, member.key);
    const c = await client.chat.completions.create({ model: `workspace/${ws.id}`, messages: [{ role: 'user', content: 'hello plain world' }] });
    expectShape(OpenAIChatCompletion, c);
    expect(c.object).toBe('chat.completion');
    expect(c.model).toBe(`workspace/${ws.id}`);
    expect(c.choices).toHaveLength(1);
    expect(c.choices[0]).toMatchObject({ index: 0, message: { role: 'assistant', content: 'Echo: hello plain world' }, finish_reason: 'stop' });
    expect(c.usage!.total_tokens).toBe(c.usage!.prompt_tokens + c.usage!.completion_tokens);
    expect(c.usage!.completion_tokens).toBeGreaterThan(0);
    expect((c as unknown as { atrium: unknown }).atrium).toEqual({ threadId: null, messageId: null, modelId: model.id });
    expect(await threadsOf(t, member.key, ws.id)).toEqual([]);
    const [log] = await logsOf(t, member.key);
    expect(log).toMatchObject({
      userId: member.id,
      workspaceId: ws.id,
      threadId: null,
      modelId: model.id,
      prompt: 'hello plain world',
      response: 'Echo: hello plain world',
      status: 'ok',
      error: null,
    });
    expect(log!.completionTokens).toBe(c.usage!.completion_tokens);
  });

  it('streams chunks ending with a usage chunk when include_usage is set, and logs the call', async () => {
    const { team, ws } = await setup();
    const stream = await sdk(baseUrl, team.ownerKey).chat.completions.create({
      model: `workspace/${ws.id}`,
      messages: [{ role: 'user', content: 'one two three' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks: OpenAI.Chat.ChatCompletionChunk[] = [];
    for await (const c of stream) chunks.push(c);
    for (const c of chunks) expectShape(OpenAIChatCompletionChunk, c);
    expect(chunks[0]!.choices[0]!.delta.role).toBe('assistant');
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('Echo: one two three');
    expect(chunks.filter((c) => c.choices[0]?.delta.content).length).toBeGreaterThanOrEqual(2);
    const finish = chunks.find((c) => c.choices[0]?.finish_reason);
    expect(finish!.choices[0]!.finish_reason).toBe('stop');
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage!.completion_tokens).toBeGreaterThan(0);
    expect(last.usage!.total_tokens).toBe(last.usage!.prompt_tokens + last.usage!.completion_tokens);
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
    const [log] = await logsOf(t, team.ownerKey);
    expect(log).toMatchObject({
      prompt: 'one two three',
      response: 'Echo: one two three',
      status: 'ok',
      threadId: null,
      completionTokens: last.usage!.completion_tokens,
    });
  });

  it('sends no usage chunk without include_usage, and ends with data: [DONE]', async () => {
    const { team, ws } = await setup();
    const res = await chat(team.ownerKey, { model: `workspace/${ws.id}`, messages: [{ role: 'user', content: 'a b' }], stream: true });
    expect(res.response.status).toBe(200);
    expect(res.response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const lines = dataLines(textOf(res));
    expect(lines.at(-1)).toBe('[DONE]');
    const chunks = lines.slice(0, -1) as Array<Record<string, unknown>>;
    expect(chunks.some((c) => 'usage' in c)).toBe(false);
    expect(chunks.every((c) => c.object === 'chat.completion.chunk')).toBe(true);
  });

  it('raises the SDK\u2019s APIError with status and code for a provider failure, and logs it as an error', async () => {
    const { team, ws } = await setup();
    s.standIn.set({ failStatus: 500 });
    const err = await sdk(baseUrl, team.ownerKey)
      .chat.completions.create({ model: `workspace/${ws.id}`, messages: [{ role: 'user', content: 'fail please' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    const e = err as InstanceType<typeof OpenAI.APIError>;
    expect(e.status).toBe(502);
    expect(e.type).toBe('api_error');
    expect(e.code).toBeTruthy();
    expect(JSON.stringify(e.error)).not.toContain(LEAKED_SECRET);
    const [log] = await logsOf(t, team.ownerKey);
    expect(log).toMatchObject({ prompt: 'fail please', status: 'error' });
  });

  it('passes a provider rate limit on as 429 with Retry-After (the SDK raises RateLimitError)', async () => {
    const { team, ws } = await setup();
    s.standIn.set({ failStatus: 429, retryAfter: '7' });
    const res = await chat(team.ownerKey, { model: `workspace/${ws.id}`, messages: [{ role: 'user', content: 'x' }] });
    const e = await expectOpenAIError(res, 429);
    expect(e.type).toBe('rate_limit_error');
    expect(res.response.headers.get('retry-after')).toBe('7');
    const err = await sdk(baseUrl, team.ownerKey)
      .chat.completions.create({ model: `workspace/${ws.id}`, messages: [{ role: 'user', content: 'x' }] })
      .catch((x: unknown) => x);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
  });

  it('ends a stream that fails after it started with one error chunk, then [DONE]; the SDK raises it', async () => {
    const { team, ws } = await setup();
    s.standIn.set({ breakStreamAfter: 2 });
    const res = await chat(team.ownerKey, { model: `workspace/${ws.id}`, messages: [{ role: 'user', content: 'one two three four five' }], stream: true });
    expect(res.response.status).toBe(200);
    const lines = dataLines(textOf(res));
    expect(lines.at(-1)).toBe('[DONE]');
    const errors = lines.filter((l): l is Record<string, unknown> => l !== '[DONE]' && 'error' in l);
    expect(errors).toHaveLength(1);
    expect(lines.at(-2)).toBe(errors[0]);
    const e = expectShape(OpenAIError, errors[0]).error;
    expect(e.type).toBe('api_error');
    expect(JSON.stringify(e)).not.toContain(LEAKED_SECRET);

    const stream = await sdk(baseUrl, team.ownerKey).chat.completions.create({
      model: `workspace/${ws.id}`,
      messages: [{ role: 'user', content: 'one two three four five' }],
      stream: true,
    });
    let text = '';
    const err = await (async () => {
      for await (const c of stream) text += c.choices[0]?.delta.content ?? '';
    })().catch((x: unknown) => x);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect(text.length).toBeGreaterThan(0);
  });

  it('aborts the provider call when the client aborts mid-stream; the prompt log ends interrupted', async () => {
    const { team, ws } = await setup();
    s.standIn.set({ hangAfterChunks: 2 });
    const abort = new AbortController();
    const stream = await sdk(baseUrl, team.ownerKey).chat.completions.create(
      { model: `workspace/${ws.id}`, messages: [{ role: 'user', content: 'one two three four five' }], stream: true },
      { signal: abort.signal },
    );
    let received = '';
    const done = (async () => {
      for await (const c of stream) {
        received += c.choices[0]?.delta.content ?? '';
        if (received.length > 0) abort.abort();
      }
    })().catch((x: unknown) => x);
    // openai v6 ends the iteration quietly (or with APIUserAbortError) when its signal aborts
    const ended = await done;
    if (ended !== undefined) expect(ended).toBeInstanceOf(OpenAI.APIUserAbortError);
    expect(received.length).toBeGreaterThan(0);
    await s.standIn.waitForAbortedRequests(1);
    await vi.waitFor(async () => {
      const [log] = await logsOf(t, team.ownerKey);
      expect(log).toMatchObject({ status: 'interrupted', threadId: null, error: 'client disconnected' });
    });
  });
});

describe('POST /v1/chat/completions with the Vercel AI SDK', () => {
  const provider = (key: string) => createOpenAICompatible({ name: 'atrium', baseURL: `${baseUrl}/v1`, apiKey: key, includeUsage: true });

  it('generateText answers and is logged', async () => {
    const { team, ws } = await setup();
    const r = await generateText({ model: provider(team.ownerKey)(`workspace/${ws.id}`), prompt: 'vercel plain call', maxRetries: 0 });
    expect(r.text).toBe('Echo: vercel plain call');
    expect(r.finishReason).toBe('stop');
    expect(r.usage.outputTokens).toBeGreaterThan(0);
    const [log] = await logsOf(t, team.ownerKey);
    expect(log).toMatchObject({ prompt: 'vercel plain call', response: 'Echo: vercel plain call', status: 'ok' });
  });

  it('streamText streams and is logged, with usage', async () => {
    const { team, model, ws } = await setup();
    const r = streamText({
      model: provider(team.ownerKey)(`workspace/${ws.id}/${model.id}`),
      system: 'Be brief.',
      prompt: 'vercel streamed call',
      maxRetries: 0,
    });
    const parts: string[] = [];
    for await (const p of r.textStream) parts.push(p);
    expect(parts.join('')).toBe('Echo: vercel streamed call');
    expect(parts.length).toBeGreaterThanOrEqual(2);
    expect((await r.usage).outputTokens).toBeGreaterThan(0);
    const [log] = await logsOf(t, team.ownerKey);
    expect(log).toMatchObject({ prompt: 'vercel streamed call', response: 'Echo: vercel streamed call', status: 'ok', modelId: model.id });
  });
});

describe('request translation', () => {
  it('sends the workspace\u2019s settings as defaults and the request\u2019s values over them, stop and system messages included', async () => {
    const { team, model, ws } = await setup();
    const set = await t.api(team.ownerKey).POST('/api/v1/workspaces/{workspaceId}/{modelId}', {
      params: { path: { workspaceId: ws.id, modelId: model.id } },
      body: { temperature: 0.3, topP: 0.5, maxTokens: 300, presencePenalty: 0.1, systemInstructions: 'Workspace rules.' },
    });
    expect(set.response.status).toBe(200);
    const m = `workspace/${ws.id}`;
    const ok1 = await chat(team.ownerKey, { model: m, messages: [{ role: 'user', content: 'defaults' }] });
    expect(ok1.response.status).toBe(200);
    const first = s.standIn.requests.at(-1)!.body;
    expect(first).toMatchObject({ temperature: 0.3, top_p: 0.5, max_tokens: 300, presence_penalty: 0.1 });
    expect(first.messages[0]).toEqual({ role: 'system', content: 'Workspace rules.' });

    const ok2 = await chat(team.ownerKey, {
      model: m,
      messages: [
        { role: 'developer', content: 'Request rules.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'part one' },
            { type: 'text', text: 'part two' },
          ],
        },
      ],
      temperature: 1.1,
      top_p: 0.9,
      max_tokens: 50,
      max_completion_tokens: 40,
      frequency_penalty: -0.5,
      presence_penalty: null,
      stop: 'END',
      logit_bias: { '42': 5 },
      n: 1,
      user: 'someone@example.com',
      metadata: { any: 'thing' },
      tool_choice: 'none',
      seed: 7,
      some_future_field: { x: 1 },
    });
    expect(ok2.response.status).toBe(200);
    const second = s.standIn.requests.at(-1)!.body;
    expect(second).toMatchObject({
      temperature: 1.1,
      top_p: 0.9,
      max_tokens: 40,
      frequency_penalty: -0.5,
      presence_penalty: 0.1,
      stop: ['END'],
      logit_bias: { '42': 5 },
    });
    expect(second.messages).toEqual([
      { role: 'system', content: 'Workspace rules.' },
      { role: 'system', content: 'Request rules.' },
      { role: 'user', content: 'part one\npart two' },
    ]);
    expect(second.tool_choice).toBeUndefined();
    expect(second.seed).toBeUndefined();
    expect((JSON.parse(textOf(ok2)) as OpenAI.Chat.ChatCompletion).choices[0]!.message.content).toBe('Echo: part one\npart two');
  });
});

describe('errors in OpenAI\u2019s shape', () => {
  it('answers bad input with 400 invalid_request_error naming the parameter', async () => {
    const { team, ws } = await setup();
    const m = `workspace/${ws.id}`;
    const user = [{ role: 'user', content: 'hi' }];
    const cases: Array<[unknown, string | null]> = [
      [{ model: m, messages: user, n: 2 }, 'n'],
      [{ model: m, messages: user, temperature: 'hot' }, 'temperature'],
      [{ model: m, messages: user, top_p: 3 }, 'top_p'],
      [{ model: m, messages: [] }, 'messages'],
      [{ model: m }, 'messages'],
      [{ messages: user }, 'model'],
      [{ model: m, messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'http://x' } }] }] }, 'messages[0].content[0].image_url.url'],
      [{ model: m, messages: [{ role: 'tool', content: 'x', tool_call_id: 'a' }] }, 'messages[0].tool_call_id'],
      [{ model: m, messages: [{ role: 'function', content: 'x' }] }, 'messages[0].role'],
      [{ model: m, messages: [{ role: 'assistant', content: 'last is not the user' }] }, 'messages[0]'],
      [{ model: m, messages: user, stream: 'yes' }, 'stream'],
    ];
    for (const [body, param] of cases) {
      const e = await expectOpenAIError(await postRaw(team.ownerKey, body), 400);
      expect(e.type, JSON.stringify(body)).toBe('invalid_request_error');
      expect(e.param, JSON.stringify(body)).toBe(param);
    }
    expect(await logsOf(t, team.ownerKey)).toEqual([]);
  });

  it('answers malformed JSON, a wrong media type, an unknown path and a wrong method in OpenAI\u2019s shape', async () => {
    const { team } = await setup();
    const e1 = await expectOpenAIError(await postRaw(team.ownerKey, '{"model": ', { 'content-type': 'application/json' }), 400, 'malformed_json');
    expect(e1.type).toBe('invalid_request_error');
    await expectOpenAIError(await postRaw(team.ownerKey, 'model=x', { 'content-type': 'text/plain' }), 415, 'unsupported_media_type');
    await expectOpenAIError(
      // raw: a path the document does not have
      await fetch(`${baseUrl}/v1/embeddings`, { method: 'POST', headers: { authorization: `Bearer ${team.ownerKey}` } }),
      404,
      'unknown_url',
    );
    // raw: an unknown path
    await expectOpenAIError(await fetch(`${baseUrl}/v1/nope/deeper`, { headers: { authorization: `Bearer ${team.ownerKey}` } }), 404, 'unknown_url');
    // raw: GET, which the document does not have on this path
    const wrong = await fetch(`${baseUrl}/v1/chat/completions`, { headers: { authorization: `Bearer ${team.ownerKey}` } });
    await expectOpenAIError(wrong, 405, 'method_not_allowed');
    expect(wrong.headers.get('allow')).toBe('POST');
    // /api/v1 keeps problem+json
    // raw: an unknown path
    const api = await fetch(`${baseUrl}/api/v1/nope`, { headers: { authorization: `Bearer ${team.ownerKey}` } });
    expect(api.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  });

  it('answers an unknown model, workspace or model outside the workspace with 404 model_not_found (the SDK raises NotFoundError)', async () => {
    const { team, ws } = await setup();
    const other = await setup();
    const stranger = await createModel(t, team.ownerKey, { ...s.modelBody('OPENAI') });
    for (const model of [
      'gpt-4o',
      `workspace/${other.ws.id}`,
      `workspace/${ws.id}/${stranger.id}`,
      `workspace/${crypto.randomUUID()}`,
      'workspace/not-a-uuid',
    ]) {
      const e = await expectOpenAIError(await chat(team.ownerKey, { model, messages: [{ role: 'user', content: 'hi' }] }), 404, 'model_not_found');
      expect(e).toMatchObject({ type: 'invalid_request_error', param: 'model' });
    }
    const err = await sdk(baseUrl, team.ownerKey)
      .chat.completions.create({ model: `workspace/${other.ws.id}`, messages: [{ role: 'user', content: 'hi' }], stream: true })
      .catch((x: unknown) => x);
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    expect((err as InstanceType<typeof OpenAI.APIError>).code).toBe('model_not_found');
    expect(await logsOf(t, team.ownerKey)).toEqual([]);
    expect(await logsOf(t, other.team.ownerKey)).toEqual([]);
  });
});

it('a team without workspaces lists no models', async () => {
  const team = await newTeam(t);
  const list = await sdk(baseUrl, team.ownerKey).models.list();
  expect(list.data).toEqual([]);
});
