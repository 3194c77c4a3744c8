/**
 * Both event streams read by independent parsers: eventsource-parser (what the Vercel AI SDK and
 * many browsers' polyfills use) and, when python3 has them, the Python `openai` SDK and httpx-sse;
 * and a streamed tool round trip read by the Python `openai` SDK and LangChain's ChatOpenAI.
 * No parser may see an event without data; `retry:` rides on /api/v1's first event and /v1 has none.
 */
import { execFile, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { paths } from '../helpers/api.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { useStandIn, type StandInKind } from '../support/use-standin.js';
import { v1Setup } from './v1-helpers.js';

const s = useStandIn();
let t: TestApp;
let baseUrl: string;

beforeAll(async () => {
  t = await startTestApp({ sseHeartbeatMs: 10 });
  baseUrl = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await t.close();
});

/** The body of a streamed answer, read as the server writes it. */
async function parse(res: { data?: unknown }): Promise<{ events: EventSourceMessage[]; retries: number[]; comments: string[] }> {
  const events: EventSourceMessage[] = [];
  const retries: number[] = [];
  const comments: string[] = [];
  const parser = createParser({ onEvent: (e) => events.push(e), onRetry: (r) => retries.push(r), onComment: (c) => comments.push(c) });
  const dec = new TextDecoder();
  for await (const chunk of res.data as AsyncIterable<Uint8Array>) parser.feed(dec.decode(chunk, { stream: true }));
  return { events, retries, comments };
}

type Completion = paths['/api/v1/chat/{workspaceId}/completions']['post']['requestBody']['content']['application/json'];
type V1Chat = paths['/v1/chat/completions']['post']['requestBody']['content']['application/json'];
const live = { headers: { accept: 'text/event-stream' }, parseAs: 'stream' } as const;

const apiStream = (key: string, workspaceId: string, body: Completion) =>
  t.api(key).POST('/api/v1/chat/{workspaceId}/completions/stream', { params: { path: { workspaceId } }, body, ...live });
const v1Stream = (key: string, body: V1Chat) => t.api(key).POST('/v1/chat/completions', { body, ...live });

describe('eventsource-parser', () => {
  it('/api/v1: every event holds JSON data, retry arrives once with the first event', async () => {
    const { team, ws } = await v1Setup(t, s);
    s.standIn.set({ chunkDelayMs: 40 });
    const res = await apiStream(team.ownerKey, ws.id, { prompt: 'one two three' });
    expect(res.response.status).toBe(200);
    const { events, retries, comments } = await parse(res);
    expect(
      events.map((e) => e.event),
      events.at(-1)?.data,
    ).toEqual(['start', 'delta', 'delta', 'delta', 'delta', 'done']);
    for (const e of events) expect((JSON.parse(e.data) as { type: string }).type).toBe(e.event);
    expect(retries).toEqual([3000]);
    // heartbeats are comments, which parsers skip
    expect(comments.length).toBeGreaterThan(0);
  });

  it('/api/v1: a stream that ends in an error event also carries data in every event', async () => {
    const { team, ws } = await v1Setup(t, s);
    s.standIn.set({ failStatus: 500 });
    const res = await apiStream(team.ownerKey, ws.id, { prompt: 'hello' });
    const { events, retries } = await parse(res);
    expect(events.map((e) => e.event)).toEqual(['start', 'error']);
    expect(events.every((e) => e.data.length > 0)).toBe(true);
    expect(retries).toEqual([3000]);
  });

  it('/v1: only data events, no retry, ending with [DONE]', async () => {
    const { team, ws } = await v1Setup(t, s);
    s.standIn.set({ chunkDelayMs: 40 });
    const res = await v1Stream(team.ownerKey, { model: `workspace/${ws.id}`, messages: [{ role: 'user', content: 'one two' }], stream: true });
    expect(res.response.status).toBe(200);
    const { events, retries } = await parse(res);
    expect(retries).toEqual([]);
    expect(events.at(-1)!.data).toBe('[DONE]');
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e.data) as { object: string; choices: Array<{ delta: { content?: string } }> });
    expect(chunks.every((c) => c.object === 'chat.completion.chunk')).toBe(true);
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('Echo: one two');
  });
});

const SCRIPT = fileURLToPath(new URL('../support/python/stream_clients.py', import.meta.url));
const python = spawnSync('python3', ['-c', 'import openai, httpx, httpx_sse'], { encoding: 'utf8' });
const pythonMissing = python.error
  ? 'python3 not found'
  : python.status !== 0
    ? `python3 cannot import openai, httpx and httpx_sse (pip install openai httpx-sse): ${python.stderr.trim().split('\n').at(-1)}`
    : null;

describe('Python clients', () => {
  it('the openai SDK reads a /v1 stream and httpx-sse reads an /api/v1 stream, every event', { timeout: 60_000 }, async (ctx) => {
    ctx.skip(pythonMissing !== null, pythonMissing ?? undefined);
    const { team, ws } = await v1Setup(t, s);
    // heartbeat comments fall between the events
    s.standIn.set({ chunkDelayMs: 40 });
    const { stdout } = await promisify(execFile)('python3', [SCRIPT, baseUrl, team.ownerKey, ws.id], { encoding: 'utf8' });
    const out = JSON.parse(stdout) as Record<string, { ok: boolean; value?: unknown; error?: string }>;
    expect(out.openai).toEqual({ ok: true, value: 'Echo: one two three' });
    expect(out.httpxSse!.ok, out.httpxSse!.error).toBe(true);
    const events = out.httpxSse!.value as Array<{ event: string; data: { type: string; content?: string }; retry: number | null }>;
    expect(events.map((e) => e.event)).toEqual(['start', 'delta', 'delta', 'delta', 'delta', 'done']);
    expect(events.every((e) => e.data.type === e.event)).toBe(true);
    expect(events[0]!.retry).toBe(3000);
    expect(
      events
        .filter((e) => e.data.content)
        .map((e) => e.data.content)
        .join(''),
    ).toBe('Echo: four five six');
  });
});

const TOOL_SCRIPT = fileURLToPath(new URL('../support/python/tool_clients.py', import.meta.url));
const langchain = spawnSync('python3', ['-c', 'import langchain_openai'], { encoding: 'utf8' });
const langchainMissing =
  pythonMissing ??
  (langchain.error || langchain.status !== 0
    ? `python3 cannot import langchain_openai (pip install langchain-openai): ${langchain.stderr.trim().split('\n').at(-1)}`
    : null);

describe.each<StandInKind>(['OPENAI', 'ANTHROPIC', 'GOOGLE'])('Python clients, tools with a %s model', (kind) => {
  type Out = Record<string, { ok: boolean; value?: Record<string, unknown>; error?: string }>;
  const run = async (): Promise<Out> => {
    const { team, ws } = await v1Setup(t, s, {}, { ...s.modelBody(kind), contextWindow: 8192 });
    s.standIn.set({ toolCalls: [{ name: 'get_weather', arguments: { city: 'Paris' } }] });
    const { stdout } = await promisify(execFile)('python3', [TOOL_SCRIPT, baseUrl, team.ownerKey, `workspace/${ws.id}`], { encoding: 'utf8' });
    return JSON.parse(stdout) as Out;
  };
  const said = kind === 'GOOGLE' ? 'Tool said: {"temp":21}' : 'Tool said: {"temp": 21}';

  it('the openai SDK reads every chunk of the call (raw and with its helper), then the streamed answer', { timeout: 60_000 }, async (ctx) => {
    ctx.skip(pythonMissing !== null, pythonMissing ?? undefined);
    const out = (await run()).openai!;
    expect(out.ok, out.error).toBe(true);
    const v = out.value as { raw: Array<{ id: string; name: string; arguments: string; pieces: number }>; rawFinish: string; helper: unknown; text: string };
    expect(v.raw.map((c) => [c.name, JSON.parse(c.arguments)])).toEqual([['get_weather', { city: 'Paris' }]]);
    expect(v.raw[0]!.id).toMatch(/^(call|toolu)_/);
    expect(v.raw[0]!.pieces).toBe(kind === 'GOOGLE' ? 1 : 3);
    expect(v.rawFinish).toBe('tool_calls');
    expect(v.helper).toEqual({ finish: 'tool_calls', name: 'get_weather', arguments: { city: 'Paris' } });
    expect(v.text).toBe(said);
  });

  it('LangChain\u2019s ChatOpenAI with bind_tools, streamed: the call, then the answer to its result', { timeout: 60_000 }, async (ctx) => {
    ctx.skip(langchainMissing !== null, langchainMissing ?? undefined);
    const out = (await run()).langchain!;
    expect(out.ok, out.error).toBe(true);
    const v = out.value as { calls: Array<{ name: string; args: unknown; id: string }>; finish: string; text: string };
    expect(v.calls.map((c) => [c.name, c.args])).toEqual([['get_weather', { city: 'Paris' }]]);
    expect(v.finish).toBe('tool_calls');
    expect(v.text).toBe(said);
  });
});
