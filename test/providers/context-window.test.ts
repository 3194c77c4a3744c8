/**
 * Threads never outgrow the model's real window: 18-turn threads through
 * /api/v1/chat against a stand-in that counts tokens differently from Atrium's o200k_base
 * (~1.8× for this text) and refuses like llama.cpp or OpenAI when the prompt does not fit.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countTokens } from '../../src/ingest/tokens.js';
import { newTeam, startTestApp, type TestApp } from '../helpers/app.js';
import { createModel, createWorkspace } from '../helpers/factories.js';
import { parseSse } from '../helpers/sse.js';
import { LEAKED_SECRET, standInPromptTokens } from '../support/standin-provider.js';
import { useStandIn, type StandInKind } from '../support/use-standin.js';

const s = useStandIn();
let t: TestApp;
let baseUrl: string;
beforeAll(async () => {
  t = await startTestApp();
  baseUrl = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(() => t.close());

const WINDOW = 4096;
/** ~75 o200k tokens, ~1.8× that in the stand-in's count. */
const PARAGRAPH =
  'The quarterly report covers revenue, churn and the hiring plan for the platform team. Budget reviews happen every second Tuesday; questions go to finance. ';
const turnText = (i: number) => `Turn ${i}: ${PARAGRAPH.repeat(4)}`;

async function setup(kind: StandInKind, model: Record<string, unknown> = {}) {
  const team = await newTeam(t);
  const m = await createModel(t, team.ownerKey, { ...s.modelBody(kind), contextWindow: WINDOW, ...model });
  const ws = await createWorkspace(t, team.ownerKey, { modelIds: [m.id] });
  return { key: team.ownerKey, wsId: ws.id };
}

async function turn(key: string, wsId: string, threadId: string | undefined, i: number, stream: boolean) {
  const payload = { prompt: turnText(i), ...(threadId ? { threadId } : {}) };
  if (!stream) {
    const res = await t.request({ method: 'POST', url: `/api/v1/chat/${wsId}/completions`, key, payload });
    return { status: res.statusCode, body: res.json() as Record<string, unknown> };
  }
  const res = await fetch(`${baseUrl}/api/v1/chat/${wsId}/completions/stream`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(payload),
  });
  const events = parseSse(await res.text());
  const start = events.find((e) => e.event === 'start')?.data as { threadId: string } | undefined;
  const last = events.at(-1);
  return {
    status: last?.event === 'done' ? 200 : ((last?.data as { status?: number } | undefined)?.status ?? res.status),
    body: { threadId: start?.threadId, last },
  };
}

async function runThread(key: string, wsId: string, turns: number, stream = false) {
  let threadId: string | undefined;
  const statuses: number[] = [];
  for (let i = 1; i <= turns; i++) {
    const r = await turn(key, wsId, threadId, i, stream);
    statuses.push(r.status);
    threadId ??= r.body.threadId as string;
  }
  return { statuses, threadId };
}

describe('the stand-in counts differently from o200k', () => {
  it('this text costs the stand-in well over 1.25× the o200k count (so o200k alone would overflow)', () => {
    const text = turnText(1);
    expect(standInPromptTokens(text.length, 0) / countTokens(text)).toBeGreaterThan(1.25);
  });
});

describe.each<[StandInKind, 'llamacpp' | 'openai']>([
  ['OPENAI', 'llamacpp'],
  ['OPENAI', 'openai'],
  ['ANTHROPIC', 'openai'],
  ['GOOGLE', 'llamacpp'],
])('an 18-turn thread on a %s model (window enforced %s-style)', (kind, style) => {
  it('every turn succeeds, the prompt always fits, and old turns are dropped', async () => {
    const { key, wsId } = await setup(kind);
    s.standIn.set({ contextWindow: { tokens: WINDOW, style } });
    const { statuses, threadId } = await runThread(key, wsId, 18);
    expect(statuses).toEqual(Array(18).fill(200));
    // The local estimate kept for calibration stays internal.
    const thread = (await t.request({ method: 'GET', url: `/api/v1/chat/${wsId}/history/${threadId}`, key })).json();
    expect(Object.keys(thread.messages.at(-1).usage).sort()).toEqual(['completionTokens', 'promptTokens', 'totalTokens']);
    // Calibrated from turn 2 on: at most the first over-long turn needed the one retry.
    expect(s.standIn.requests.length).toBeLessThanOrEqual(19);
    const lastBody = s.standIn.requests.at(-1)!.body as Record<string, unknown>;
    const sent = JSON.stringify(lastBody);
    expect(sent).toContain('Turn 18:');
    expect(sent).toContain('Turn 17:');
    expect(sent).not.toContain('Turn 1:');
  });
});

describe('when the provider reports no usage (no calibration possible)', () => {
  it('a context-length refusal is retried once with less history: streamed and plain turns all succeed', async () => {
    const { key, wsId } = await setup('OPENAI');
    s.standIn.set({ contextWindow: { tokens: WINDOW, style: 'openai' }, noUsage: true });
    const plain = await runThread(key, wsId, 9);
    expect(plain.statuses).toEqual(Array(9).fill(200));
    const streamed = await runThread(key, wsId, 9, true);
    expect(streamed.statuses).toEqual(Array(9).fill(200));
    const refused = s.standIn.requests.length - 18;
    expect(refused).toBeGreaterThan(0); // the retry path was taken
  });

  it('a refusal that remains (a single prompt too long) is a 400 context_length_exceeded, no upstream text', async () => {
    const { key, wsId } = await setup('OPENAI');
    s.standIn.set({ contextWindow: { tokens: 200, style: 'llamacpp' } });
    const res = await t.request({ method: 'POST', url: `/api/v1/chat/${wsId}/completions`, key, payload: { prompt: PARAGRAPH.repeat(20) } });
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toContain('application/problem+json');
    expect(res.json()).toMatchObject({ code: 'context_length_exceeded' });
    expect(res.body).not.toContain(LEAKED_SECRET);
    expect(s.standIn.requests).toHaveLength(1); // no history to drop: no retry
  });
});

describe('the default output cap', () => {
  it('a model without maxTokens sends min(4096, window / 4)', async () => {
    const small = await setup('OPENAI');
    await turn(small.key, small.wsId, undefined, 1, false);
    expect(s.standIn.requests.at(-1)!.body.max_tokens).toBe(1024);
    const big = await setup('ANTHROPIC', { contextWindow: 200_000 });
    await turn(big.key, big.wsId, undefined, 1, false);
    expect(s.standIn.requests.at(-1)!.body.max_tokens).toBe(4096);
  });
});

describe('a conversation the client keeps in `messages` (no stored thread)', () => {
  const SYSTEM = 'You are the finance assistant. Answer in one line.';

  /** 18 turns, each call sending the whole conversation so far; the stand-in's answers appended. */
  async function runConversation(call: (messages: Array<{ role: string; content: string }>) => Promise<{ status: number; content: string }>) {
    const messages = [{ role: 'system', content: SYSTEM }];
    const statuses: number[] = [];
    for (let i = 1; i <= 18; i++) {
      messages.push({ role: 'user', content: turnText(i) });
      const r = await call(messages);
      statuses.push(r.status);
      messages.push({ role: 'assistant', content: r.content });
    }
    return statuses;
  }

  function expectFitted() {
    const sent = s.standIn.requests.at(-1)!.body.messages as Array<{ role: string; content: string }>;
    expect(sent[0]).toEqual({ role: 'system', content: SYSTEM });
    expect(sent.at(-1)!.content).toContain('Turn 18:');
    expect(JSON.stringify(sent)).toContain('Turn 17:');
    expect(JSON.stringify(sent)).not.toContain('Turn 1:');
    // the kept turns are the newest ones, in order
    const kept = sent.filter((m) => m.role === 'user').map((m) => Number(/^Turn (\d+):/.exec(m.content)![1]));
    expect(kept).toEqual(Array.from({ length: kept.length }, (_, j) => 19 - kept.length + j));
    // once calibrated by the first answer, at most one turn needed the one retry
    expect(s.standIn.requests.length).toBeLessThanOrEqual(19);
  }

  it.each([false, true])('on /v1 (stream: %s), every turn fits a 4,096 window', async (stream) => {
    const { key, wsId } = await setup('OPENAI');
    s.standIn.set({ contextWindow: { tokens: WINDOW, style: 'llamacpp' } });
    const statuses = await runConversation(async (messages) => {
      const res = await fetch(`${baseUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: `workspace/${wsId}`, messages, stream }),
      });
      if (res.status !== 200) return { status: res.status, content: '' };
      const text = await res.text();
      if (!stream) return { status: 200, content: (JSON.parse(text) as { choices: Array<{ message: { content: string } }> }).choices[0]!.message.content };
      const chunks = text
        .split('\n')
        .filter((l) => l.startsWith('data: {'))
        .map((l) => JSON.parse(l.slice(6)) as { error?: { code: string }; choices?: Array<{ delta: { content?: string } }> });
      const failed = chunks.find((c) => c.error);
      return { status: failed ? 502 : 200, content: chunks.map((c) => c.choices?.[0]?.delta.content ?? '').join('') };
    });
    expect(statuses).toEqual(Array(18).fill(200));
    expectFitted();
  });

  it('a model saved without a window fits the one its provider reports (llama.cpp /props), and says so', async () => {
    s.standIn.set({ contextWindow: { tokens: WINDOW, style: 'llamacpp' } });
    const team = await newTeam(t);
    const m = await createModel(t, team.ownerKey, { ...s.modelBody('OPENAI'), contextWindow: null });
    expect(m).toMatchObject({ contextWindow: null, contextWindowUsed: WINDOW, contextWindowSource: 'probed', contextWindowProbe: 'llama.cpp /props n_ctx' });
    const got = (await t.request({ method: 'GET', url: `/api/v1/models/${m.id}`, key: team.ownerKey })).json();
    expect(got).toMatchObject({ contextWindow: null, contextWindowUsed: WINDOW, contextWindowSource: 'probed' });
    const ws = await createWorkspace(t, team.ownerKey, { modelIds: [m.id] });
    const statuses = await runConversation(async (messages) => {
      const res = await t.request({ method: 'POST', url: `/api/v1/chat/${ws.id}/completions`, key: team.ownerKey, payload: { messages } });
      return { status: res.statusCode, content: res.statusCode === 200 ? (res.json() as { message: { content: string } }).message.content : '' };
    });
    expect(statuses).toEqual(Array(18).fill(200));
    // fitted to the reported window from the start: without it (8,192 assumed) every later turn is refused once
    expectFitted();
  });

  it('on /api/v1 with a `messages` array, every turn fits a 4,096 window', async () => {
    const { key, wsId } = await setup('OPENAI');
    s.standIn.set({ contextWindow: { tokens: WINDOW, style: 'openai' } });
    const statuses = await runConversation(async (messages) => {
      const res = await t.request({ method: 'POST', url: `/api/v1/chat/${wsId}/completions`, key, payload: { messages } });
      return { status: res.statusCode, content: res.statusCode === 200 ? (res.json() as { message: { content: string } }).message.content : '' };
    });
    expect(statuses).toEqual(Array(18).fill(200));
    expectFitted();
  });
});
