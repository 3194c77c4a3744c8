/**
 * Both event streams read by independent parsers: eventsource-parser (what the Vercel AI SDK and
 * many browsers' polyfills use) and, when python3 has them, the Python `openai` SDK and httpx-sse.
 * No parser may see an event without data; `retry:` rides on /api/v1's first event and /v1 has none.
 */
import { execFile, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { useStandIn } from '../support/use-standin.js';
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

async function parse(res: Response): Promise<{ events: EventSourceMessage[]; retries: number[]; comments: string[] }> {
  const events: EventSourceMessage[] = [];
  const retries: number[] = [];
  const comments: string[] = [];
  const parser = createParser({ onEvent: (e) => events.push(e), onRetry: (r) => retries.push(r), onComment: (c) => comments.push(c) });
  const dec = new TextDecoder();
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) parser.feed(dec.decode(chunk, { stream: true }));
  return { events, retries, comments };
}

function post(url: string, key: string, body: object): Promise<Response> {
  return fetch(`${baseUrl}${url}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

describe('eventsource-parser', () => {
  it('/api/v1: every event holds JSON data, retry arrives once with the first event', async () => {
    const { team, ws } = await v1Setup(t, s);
    s.standIn.set({ chunkDelayMs: 40 });
    const res = await post(`/api/v1/chat/${ws.id}/completions/stream`, team.ownerKey, { prompt: 'one two three' });
    expect(res.status).toBe(200);
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
    const res = await post(`/api/v1/chat/${ws.id}/completions/stream`, team.ownerKey, { prompt: 'hello' });
    const { events, retries } = await parse(res);
    expect(events.map((e) => e.event)).toEqual(['start', 'error']);
    expect(events.every((e) => e.data.length > 0)).toBe(true);
    expect(retries).toEqual([3000]);
  });

  it('/v1: only data events, no retry, ending with [DONE]', async () => {
    const { team, ws } = await v1Setup(t, s);
    s.standIn.set({ chunkDelayMs: 40 });
    const res = await post('/v1/chat/completions', team.ownerKey, {
      model: `workspace/${ws.id}`,
      messages: [{ role: 'user', content: 'one two' }],
      stream: true,
    });
    expect(res.status).toBe(200);
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
