/**
 * Threads never outgrow the model's real window: 18-turn threads through
 * /api/v1/chat against a stand-in that counts tokens differently from Atrium's o200k_base
 * (~1.8× for this text) and refuses like llama.cpp or OpenAI when the prompt does not fit.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countTokens } from '../../src/ingest/tokens.js';
import { expectStatus, type paths } from '../helpers/api.js';
import { newTeam, startTestApp, type TestApp } from '../helpers/app.js';
import { createModel, createWorkspace } from '../helpers/factories.js';
import { parseSse } from '../helpers/sse.js';
import { LEAKED_SECRET, standInPromptTokens } from '../support/standin-provider.js';
import { useStandIn, type StandInKind } from '../support/use-standin.js';

const s = useStandIn();
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
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

type Completion = paths['/api/v1/chat/{workspaceId}/completions']['post']['requestBody']['content']['application/json'];
type Messages = NonNullable<Completion['messages']>;
const wsAt = (workspaceId: string) => ({ params: { path: { workspaceId } } });

async function turn(key: string, wsId: string, threadId: string | undefined, i: number, stream: boolean) {
  const body = { prompt: turnText(i), ...(threadId ? { threadId } : {}) };
  if (!stream) {
    const res = await t.api(key).POST('/api/v1/chat/{workspaceId}/completions', { ...wsAt(wsId), body });
    return { status: res.response.status, body: { threadId: res.data?.threadId } };
  }
  const res = await t.api(key).POST('/api/v1/chat/{workspaceId}/completions/stream', { ...wsAt(wsId), body, parseAs: 'text' });
  const events = parseSse(res.response.status === 200 ? (res.data as unknown as string) : '');
  const start = events.find((e) => e.event === 'start')?.data as { threadId: string } | undefined;
  const last = events.at(-1);
  return {
    status: last?.event === 'done' ? 200 : ((last?.data as { status?: number } | undefined)?.status ?? res.response.status),
    body: { threadId: start?.threadId, last },
  };
}

async function runThread(key: string, wsId: string, turns: number, stream = false) {
  let threadId: string | undefined;
  const statuses: number[] = [];
  for (let i = 1; i <= turns; i++) {
    const r = await turn(key, wsId, threadId, i, stream);
    statuses.push(r.status);
    threadId ??= r.body.threadId;
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
    const thread = expectStatus(
      await t.api(key).GET('/api/v1/chat/{workspaceId}/history/{threadId}', { params: { path: { workspaceId: wsId, threadId: threadId! } } }),
      200,
    );
    expect(Object.keys(thread.messages.at(-1)!.usage!).sort()).toEqual(['completionTokens', 'promptTokens', 'totalTokens']);
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
    const res = await t.api(key).POST('/api/v1/chat/{workspaceId}/completions', { ...wsAt(wsId), body: { prompt: PARAGRAPH.repeat(20) } });
    expect(res.response.status).toBe(400);
    expect(res.response.headers.get('content-type')).toContain('application/problem+json');
    expect(res.error).toMatchObject({ code: 'context_length_exceeded' });
    expect(JSON.stringify(res.error)).not.toContain(LEAKED_SECRET);
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
  async function runConversation(call: (messages: Messages) => Promise<{ status: number; content: string }>) {
    const messages: Messages = [{ role: 'system', content: SYSTEM }];
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
      const res = await t.api(key).POST('/v1/chat/completions', { body: { model: `workspace/${wsId}`, messages, stream }, parseAs: 'text' });
      if (res.response.status !== 200) return { status: res.response.status, content: '' };
      const text = res.data as unknown as string;
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
    const got = expectStatus(await t.api(team.ownerKey).GET('/api/v1/models/{modelId}', { params: { path: { modelId: m.id } } }), 200);
    expect(got).toMatchObject({ contextWindow: null, contextWindowUsed: WINDOW, contextWindowSource: 'probed' });
    const ws = await createWorkspace(t, team.ownerKey, { modelIds: [m.id] });
    const statuses = await runConversation(async (messages) => {
      const res = await t.api(team.ownerKey).POST('/api/v1/chat/{workspaceId}/completions', { ...wsAt(ws.id), body: { messages } });
      return { status: res.response.status, content: res.data?.message.content ?? '' };
    });
    expect(statuses).toEqual(Array(18).fill(200));
    // fitted to the reported window from the start: without it (8,192 assumed) every later turn is refused once
    expectFitted();
  });

  it('on /api/v1 with a `messages` array, every turn fits a 4,096 window', async () => {
    const { key, wsId } = await setup('OPENAI');
    s.standIn.set({ contextWindow: { tokens: WINDOW, style: 'openai' } });
    const statuses = await runConversation(async (messages) => {
      const res = await t.api(key).POST('/api/v1/chat/{workspaceId}/completions', { ...wsAt(wsId), body: { messages } });
      return { status: res.response.status, content: res.data?.message.content ?? '' };
    });
    expect(statuses).toEqual(Array(18).fill(200));
    expectFitted();
  });
});
