import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectStatus, type paths } from '../helpers/api.js';
import { expectProblem, newTeam, startTestApp, storedMessageCount, type TeamFixture, type TestApp } from '../helpers/app.js';
import { createModel, createWorkspace } from '../helpers/factories.js';
import { expectShape } from '../helpers/shape.js';
import { ChatThreadFull } from '../../src/modules/chat/schema.js';
import { parseSse } from '../helpers/sse.js';
import { LEAKED_SECRET } from '../support/standin-provider.js';
import { useStandIn } from '../support/use-standin.js';

let t: TestApp;
const stand = useStandIn();
let baseUrl: string;

beforeAll(async () => {
  t = await startTestApp({ providerTimeouts: { connectMs: 2000, totalMs: 3000, idleMs: 400 } });
  baseUrl = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await t.close();
});

type Protocol = 'OPENAI' | 'AZURE' | 'ANTHROPIC' | 'GOOGLE';
function modelBody(p: Protocol): Record<string, unknown> {
  switch (p) {
    case 'OPENAI':
      return { apiBase: 'OPENAI', url: stand.standIn.openaiBaseUrl, baseModel: 'gpt-test', apiKey: 'sk-openai-test' };
    case 'AZURE':
      return { apiBase: 'OPENAI', connectionType: 'AZURE', url: stand.standIn.azureBaseUrl, baseModel: 'my-deployment', apiKey: 'azure-key-test' };
    case 'ANTHROPIC':
      return { apiBase: 'ANTHROPIC', url: stand.standIn.anthropicBaseUrl, baseModel: 'claude-test', apiKey: 'sk-ant-test' };
    case 'GOOGLE':
      return { apiBase: 'GOOGLE', url: stand.standIn.geminiBaseUrl, baseModel: 'gemini-test', apiKey: 'g-key-test' };
  }
}

async function setup(p: Protocol = 'OPENAI', model: Record<string, unknown> = {}, ws: Record<string, unknown> = {}) {
  const team = await newTeam(t);
  const m = await createModel(t, team.ownerKey, { ...modelBody(p), contextWindow: 8192, ...model });
  const w = await createWorkspace(t, team.ownerKey, { modelIds: [m.id], ...ws });
  return { team, model: m, ws: w };
}

type Completion = paths['/api/v1/chat/{workspaceId}/completions']['post']['requestBody']['content']['application/json'];
const at = <P>(path: P) => ({ params: { path } });

const complete = (key: string, wsId: string, body: Completion) =>
  t.api(key).POST('/api/v1/chat/{workspaceId}/completions', { ...at({ workspaceId: wsId }), body });
// raw: bodies the document rejects (missing, out of range, unknown fields)
const completeRaw = (key: string, wsId: string, payload: object) => t.request({ method: 'POST', url: `/api/v1/chat/${wsId}/completions`, key, payload });

async function stream(key: string, wsId: string, body: Completion) {
  const { data, response } = await t.api(key).POST('/api/v1/chat/{workspaceId}/completions/stream', {
    ...at({ workspaceId: wsId }),
    body,
    headers: { accept: 'text/event-stream' },
    parseAs: 'stream',
  });
  let text = '';
  if (response.headers.get('content-type')?.startsWith('text/event-stream')) {
    const decoder = new TextDecoder();
    for await (const chunk of data as unknown as AsyncIterable<Uint8Array>) text += decoder.decode(chunk, { stream: true });
  }
  return { res: response, events: parseSse(text) };
}

const thread$ = (key: string, workspaceId: string, threadId: string) =>
  t.api(key).GET('/api/v1/chat/{workspaceId}/history/{threadId}', at({ workspaceId, threadId }));
const history$ = (key: string, workspaceId: string) => t.api(key).GET('/api/v1/chat/{workspaceId}/history', at({ workspaceId }));
const logs$ = (key: string, size?: number) => t.api(key).GET('/api/v1/chat/prompt-logs/paged', { params: { query: size ? { size } : {} } });

describe.each(['OPENAI', 'AZURE', 'ANTHROPIC', 'GOOGLE'] as const)('completions over %s', (p) => {
  it('answers a plain completion and stores the thread', async () => {
    const { team, model, ws } = await setup(p);
    const a = expectStatus(await complete(team.ownerKey, ws.id, { prompt: 'hello there world' }), 200);
    expect(a).toMatchObject({ modelId: model.id, message: { role: 'assistant', content: 'Echo: hello there world' }, finishReason: 'stop', sources: [] });
    expect(a.usage.completionTokens).toBeGreaterThan(0);
    expect(a.usage.totalTokens).toBe(a.usage.promptTokens + a.usage.completionTokens);
    const thread = expectStatus(await thread$(team.ownerKey, ws.id, a.threadId), 200);
    expect(thread.title).toBe('hello there world');
    expect(thread.messages.map((m) => [m.role, m.content])).toEqual([
      ['user', 'hello there world'],
      ['assistant', 'Echo: hello there world'],
    ]);
    expect(thread.messages[1]).toMatchObject({ id: a.messageId, status: 'ok', modelId: model.id });
  });

  it('streams start, deltas and done, and keeps the answer', async () => {
    const { team, ws } = await setup(p);
    const { res, events } = await stream(team.ownerKey, ws.id, { messages: [{ role: 'user', content: 'one two three' }] });
    expect(res.status).toBe(200);
    const kinds = events.map((e) => e.event);
    expect(kinds[0]).toBe('start');
    expect(kinds.at(-1)).toBe('done');
    expect(kinds.filter((k) => k === 'delta').length).toBeGreaterThanOrEqual(2);
    for (const e of events) expect(e.data.type).toBe(e.event);
    const text = events
      .filter((e) => e.event === 'delta')
      .map((e) => e.data.content)
      .join('');
    expect(text).toBe('Echo: one two three');
    const start = events[0]!.data;
    const thread = expectStatus(await thread$(team.ownerKey, ws.id, start.threadId as string), 200);
    expect(thread.messages.at(-1)).toMatchObject({ id: start.messageId, role: 'assistant', content: text, status: 'ok' });
  });
});

describe('concurrent turns', () => {
  it('stores every turn of many parallel completions, new threads and one shared thread alike', async () => {
    const { team, ws } = await setup('OPENAI');
    const shared = expectStatus(await complete(team.ownerKey, ws.id, { prompt: 'shared start' }), 200).threadId;
    const results = await Promise.all(
      Array.from({ length: 24 }, (_, i) =>
        complete(team.ownerKey, ws.id, i % 3 === 0 ? { prompt: `in shared ${i}`, threadId: shared } : { prompt: `alone ${i}` }),
      ),
    );
    for (const r of results) expect(r.response.status).toBe(200);
    const threads = expectStatus(await history$(team.ownerKey, ws.id), 200);
    expect(threads).toHaveLength(1 + 16);
    // every turn is stored; turns sent together branch from the answer they followed (versions:
    // docs/DECISIONS.md), so the thread lists, and messageCount counts, only its active path
    expect(await storedMessageCount(t, shared)).toBe(2 + 8 * 2);
    const full = expectStatus(await thread$(team.ownerKey, ws.id, shared), 200);
    expect(threads.find((th) => th.id === shared)!.messageCount).toBe(full.messages.length);
    expect(full.messages.slice(0, 2).map((m) => m.content)).toEqual(['shared start', 'Echo: shared start']);
    const logs = expectStatus(await logs$(team.ownerKey, 100), 200);
    expect(logs.totalElements).toBe(25);
    expect(logs.content.every((l) => l.status === 'ok')).toBe(true);
  });
});

describe('prompt assembly', () => {
  it('puts system instructions and added context first, then history, then the new turn', async () => {
    const { team, model, ws } = await setup('OPENAI');
    await t.api(team.ownerKey).POST('/api/v1/workspaces/{workspaceId}/{modelId}', {
      ...at({ workspaceId: ws.id, modelId: model.id }),
      body: { systemInstructions: 'Be terse.', addedContext: 'Team facts.', temperature: 0.2, maxTokens: 100 },
    });
    const first = expectStatus(await complete(team.ownerKey, ws.id, { prompt: 'first question' }), 200);
    stand.standIn.reset();
    await complete(team.ownerKey, ws.id, { prompt: 'second question', threadId: first.threadId, temperature: 0.7 });
    const sent = stand.standIn.requests[0]!.body;
    expect(sent.messages).toEqual([
      { role: 'system', content: 'Be terse.\n\nTeam facts.' },
      { role: 'user', content: 'first question' },
      { role: 'assistant', content: 'Echo: first question' },
      { role: 'user', content: 'second question' },
    ]);
    expect(sent.temperature).toBe(0.7);
    expect(sent.max_tokens ?? sent.max_completion_tokens).toBe(100);
  });

  it('places the system text where each protocol wants it', async () => {
    for (const p of ['ANTHROPIC', 'GOOGLE'] as const) {
      const { team, model, ws } = await setup(p);
      await t.api(team.ownerKey).POST('/api/v1/workspaces/{workspaceId}/{modelId}', {
        ...at({ workspaceId: ws.id, modelId: model.id }),
        body: { systemInstructions: 'Answer in French.' },
      });
      stand.standIn.reset();
      await complete(team.ownerKey, ws.id, { prompt: 'bonjour' });
      const body = stand.standIn.requests[0]!.body;
      if (p === 'ANTHROPIC') expect(JSON.stringify(body.system)).toContain('Answer in French.');
      else expect(JSON.stringify(body.systemInstruction ?? body.system_instruction)).toContain('Answer in French.');
    }
  });

  it('folds the system text into the user turn when the model has no system prompts, and applies the prompt wrapper', async () => {
    const { team, model, ws } = await setup('OPENAI', { usesSystemPrompts: false, promptWrapper: { wrapperName: 'inst', value: '[INST] {{prompt}} [/INST]' } });
    await t.api(team.ownerKey).POST('/api/v1/workspaces/{workspaceId}/{modelId}', {
      ...at({ workspaceId: ws.id, modelId: model.id }),
      body: { systemInstructions: 'Be kind.' },
    });
    await complete(team.ownerKey, ws.id, { prompt: 'hi' });
    const msgs = stand.standIn.requests[0]!.body.messages;
    expect(msgs).toEqual([{ role: 'user', content: 'Be kind.\n\n[INST] hi [/INST]' }]);
  });

  it('cuts old history to fit the context window', async () => {
    const { team, ws } = await setup('OPENAI', { contextWindow: 300 });
    const long = 'word '.repeat(60);
    let threadId: string | undefined;
    for (let i = 0; i < 4; i++) {
      const r = expectStatus(await complete(team.ownerKey, ws.id, { prompt: `${i} ${long}`, threadId, maxTokens: 50 }), 200);
      threadId = r.threadId;
    }
    const last = stand.standIn.requests.at(-1)!.body.messages as Array<{ content: string }>;
    expect(last.at(-1)!.content.startsWith('3 ')).toBe(true);
    expect(last.length).toBeLessThan(7);
    expect(last.some((m) => m.content.startsWith('0 '))).toBe(false);
  });
});

describe('failures', () => {
  it('maps an upstream 500 to 502 without echoing the upstream body, and logs the failure', async () => {
    const { team, ws } = await setup('OPENAI');
    stand.standIn.set({ failStatus: 500 });
    const res = await complete(team.ownerKey, ws.id, { prompt: 'boom' });
    const p = expectProblem(res, 502);
    expect(p.code).toBe('provider_error');
    expect(JSON.stringify(res.error)).not.toContain(LEAKED_SECRET);
    const threads = expectStatus(await history$(team.ownerKey, ws.id), 200);
    expect(threads).toHaveLength(1);
    // the failed turn is kept: an assistant message of status error with the problem, as a reload reads it
    const thread = expectShape(ChatThreadFull, (await thread$(team.ownerKey, ws.id, threads[0]!.id)).data);
    expect(thread.messages.map((m) => [m.role, m.status])).toEqual([
      ['user', 'ok'],
      ['assistant', 'error'],
    ]);
    expect(thread.messages[1]).toMatchObject({ content: '', usage: null, error: { status: 502, code: 'provider_error', detail: p.detail } });
    expect(thread.messages[0]!.error).toBeNull();
    const logs = expectStatus(await logs$(team.ownerKey), 200);
    expect(logs.content[0]).toMatchObject({ status: 'error', prompt: 'boom' });
    expect(JSON.stringify(logs)).not.toContain(LEAKED_SECRET);
    expect(JSON.stringify(thread)).not.toContain(LEAKED_SECRET);
    // the next turn of the thread works, and the failure is not sent to the model as history
    stand.standIn.reset();
    const again = await complete(team.ownerKey, ws.id, { prompt: 'boom again', threadId: thread.id });
    expect(again.response.status).toBe(200);
    const sent = stand.standIn.requests.at(-1)!.body.messages as Array<{ role: string; content: string }>;
    expect(sent.map((m) => m.role)).toEqual(['user', 'user']);
  });

  it('keeps a failed streamed turn too, with the error event\u2019s problem', async () => {
    const { team, ws } = await setup('OPENAI');
    stand.standIn.set({ failStatus: 500 });
    const { res, events } = await stream(team.ownerKey, ws.id, { prompt: 'boom' });
    expect(res.status).toBe(200);
    const error = events.find((e) => e.event === 'error')!.data as { status: number; code: string; detail: string };
    const start = events.find((e) => e.event === 'start')!.data as { threadId: string; messageId: string };
    const thread = expectShape(ChatThreadFull, (await thread$(team.ownerKey, ws.id, start.threadId)).data);
    expect(thread.messages.at(-1)).toMatchObject({
      id: start.messageId,
      role: 'assistant',
      status: 'error',
      error: { status: error.status, code: error.code, detail: error.detail },
    });
  });

  it('maps upstream auth failures and garbage to 502 with stable codes', async () => {
    const { team, ws } = await setup('ANTHROPIC');
    // A provider's 429 is our 429 with Retry-After: test/providers/errors-api.test.ts.
    for (const [sw, code] of [
      [{ failStatus: 401 }, 'provider_auth_failed'],
      [{ malformed: true }, 'provider_bad_response'],
    ] as const) {
      stand.standIn.reset();
      stand.standIn.set(sw);
      const p = expectProblem(await complete(team.ownerKey, ws.id, { prompt: 'x' }), 502);
      expect(p.code).toBe(code);
    }
  });

  it('answers 504 when the provider is too slow', async () => {
    const { team, ws } = await setup('GOOGLE');
    stand.standIn.set({ delayMs: 5000 });
    const p = expectProblem(await complete(team.ownerKey, ws.id, { prompt: 'slow' }), 504);
    expect(p.code).toBe('provider_timeout');
  });

  it('sends an error event when a stream breaks, keeping what arrived', async () => {
    const { team, ws } = await setup('OPENAI');
    stand.standIn.set({ breakStreamAfter: 2 });
    const { events } = await stream(team.ownerKey, ws.id, { prompt: 'a b c d e f g' });
    expect(events[0]!.event).toBe('start');
    const last = events.at(-1)!;
    expect(last.event).toBe('error');
    expect(last.data).toMatchObject({ status: 502 });
    expect(typeof last.data.code).toBe('string');
    const thread = expectStatus(await thread$(team.ownerKey, ws.id, events[0]!.data.threadId as string), 200);
    expect(thread.messages.at(-1)).toMatchObject({ role: 'assistant', status: 'interrupted' });
  });

  it('times out a stream that goes silent', async () => {
    const { team, ws } = await setup('ANTHROPIC');
    stand.standIn.set({ hangAfterChunks: 1 });
    const { events } = await stream(team.ownerKey, ws.id, { prompt: 'a b c' });
    expect(events.at(-1)).toMatchObject({ event: 'error', data: { status: 504, code: 'provider_timeout' } });
  });

  it('aborts the provider call when the client disconnects and keeps the partial answer as interrupted', async () => {
    const { team, ws } = await setup('OPENAI');
    stand.standIn.set({ chunkDelayMs: 150 });
    const abort = new AbortController();
    // raw: a real socket, so the client can hang up while the answer streams
    const res = await fetch(`${baseUrl}/api/v1/chat/${ws.id}/completions/stream`, {
      method: 'POST',
      headers: { authorization: `Bearer ${team.ownerKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: 'one two three four five six seven eight nine ten' }),
      signal: abort.signal,
    });
    const reader = res.body!.getReader();
    let text = '';
    while (!text.includes('event: delta')) text += new TextDecoder().decode((await reader.read()).value);
    const threadId = parseSse(text.slice(0, text.lastIndexOf('\n\n'))).find((e) => e.event === 'start')!.data.threadId as string;
    abort.abort();
    await stand.standIn.waitForAbortedRequests(1, 3000);
    let thread;
    for (let i = 0; i < 50; i++) {
      thread = expectStatus(await thread$(team.ownerKey, ws.id, threadId), 200);
      if (thread.messages.length === 2) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(thread!.messages[1]).toMatchObject({ role: 'assistant', status: 'interrupted' });
    expect(thread!.messages[1]!.content.startsWith('Echo:')).toBe(true);
    expect(thread!.messages[1]!.content.length).toBeLessThan('Echo: one two three four five six seven eight nine ten'.length);
    const logs = expectStatus(await logs$(team.ownerKey), 200);
    expect(logs.content[0]).toMatchObject({ status: 'interrupted', threadId });
  });

  it('marks a plain completion whose client hangs up as interrupted and cancels the provider call', async () => {
    const { team, ws } = await setup('OPENAI');
    stand.standIn.set({ delayMs: 1500 });
    const abort = new AbortController();
    // raw: a real socket, so the client can hang up while the provider is still answering
    const pending = fetch(`${baseUrl}/api/v1/chat/${ws.id}/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${team.ownerKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: 'never mind' }),
      signal: abort.signal,
    }).catch(() => null);
    while (stand.standIn.inFlight === 0) await new Promise((r) => setTimeout(r, 10));
    abort.abort();
    await pending;
    await stand.standIn.waitForAbortedRequests(1, 3000);
    let log;
    // (a new thread's plain turn is written whole: its log appears once the interrupted call is stored)
    for (let i = 0; i < 50; i++) {
      log = expectStatus(await logs$(team.ownerKey), 200).content[0];
      if (log && log.status !== 'pending') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(log).toMatchObject({ status: 'interrupted', prompt: 'never mind' });
  });

  it('answers bad requests with 4xx before opening a stream', async () => {
    const { team, ws } = await setup('OPENAI');
    const other = await setup('OPENAI');
    const cases: Array<[object, number]> = [
      [{}, 400],
      [{ prompt: '' }, 400],
      [{ messages: [{ role: 'assistant', content: 'hi' }] }, 400],
      [{ messages: [{ role: 'wizard', content: 'hi' }] }, 400],
      [{ prompt: 'x', temperature: 3 }, 400],
      [{ prompt: 'x', maxTokens: 100000 }, 400],
      [{ prompt: 'x', modelId: other.model.id }, 400],
      [{ prompt: 'x', threadId: 'nope' }, 400],
      [{ prompt: 'x', threadId: '00000000-0000-4000-8000-000000000000' }, 404],
      [{ prompt: 'x', extra: 1 }, 400],
    ];
    for (const [payload, status] of cases) {
      expectProblem(await completeRaw(team.ownerKey, ws.id, payload), status);
      // raw: the same bodies the document rejects, on the stream
      const s = await fetch(`${baseUrl}/api/v1/chat/${ws.id}/completions/stream`, {
        method: 'POST',
        headers: { authorization: `Bearer ${team.ownerKey}`, 'content-type': 'application/json' },
        body: JSON.stringify(payload),
      });
      expect(s.status).toBe(status);
      expect(s.headers.get('content-type')).toContain('application/problem+json');
    }
    expect(stand.standIn.requests).toHaveLength(0);
    const empty = await createWorkspace(t, team.ownerKey);
    expect(expectProblem(await complete(team.ownerKey, empty.id, { prompt: 'x' }), 400).code).toBe('workspace_has_no_model');
  });
});

describe('threads and visibility', () => {
  async function teamWithMembers(history: 'TEAM' | 'USER') {
    const { team, ws } = await setup('OPENAI', {}, { chatHistoryType: history });
    const m1 = await team.addUser('member');
    const m2 = await team.addUser('member');
    const t1 = expectStatus(await complete(m1.key, ws.id, { prompt: 'from member one' }), 200).threadId;
    const t2 = expectStatus(await complete(m2.key, ws.id, { prompt: 'from member two' }), 200).threadId;
    return { team, ws, m1, m2, t1, t2 };
  }
  const ids = async (key: string, wsId: string) => expectStatus(await history$(key, wsId), 200).map((x) => x.id);

  it('TEAM history: every member sees every thread, newest first; only the starter or an admin changes one', async () => {
    const { team, ws, m1, m2, t1, t2 } = await teamWithMembers('TEAM');
    expect(await ids(m1.key, ws.id)).toEqual([t2, t1]);
    const list = expectStatus(await history$(m1.key, ws.id), 200);
    expect(list[0]).toMatchObject({ id: t2, workspaceId: ws.id, messageCount: 2, title: 'from member two' });
    const one = at({ workspaceId: ws.id, threadId: t2 });
    expectProblem(await t.api(m1.key).POST('/api/v1/chat/{workspaceId}/history/{threadId}', { ...one, body: { title: 'mine now' } }), 403);
    expectProblem(await t.api(m1.key).DELETE('/api/v1/chat/{workspaceId}/history/{threadId}', one), 403);
    const renamed = await t.api(m2.key).POST('/api/v1/chat/{workspaceId}/history/{threadId}', { ...one, body: { title: 'Renamed', messages: [] } });
    expect(renamed.data).toMatchObject({ id: t2, title: 'Renamed' });
    // a member's "delete all" removes only their own threads
    expect((await t.api(m1.key).DELETE('/api/v1/chat/{workspaceId}/history', at({ workspaceId: ws.id }))).response.status).toBe(200);
    expect(await ids(team.ownerKey, ws.id)).toEqual([t2]);
    // an owner deletes anyone's
    expect((await t.api(team.ownerKey).DELETE('/api/v1/chat/{workspaceId}/history/{threadId}', one)).response.status).toBe(200);
    expect(await ids(team.ownerKey, ws.id)).toEqual([]);
  });

  it('USER history: each user sees only their own threads', async () => {
    const { team, ws, m1, m2, t1, t2 } = await teamWithMembers('USER');
    expect(await ids(m1.key, ws.id)).toEqual([t1]);
    expect(await ids(m2.key, ws.id)).toEqual([t2]);
    expect(await ids(team.ownerKey, ws.id)).toEqual([]);
    expectProblem(await thread$(m1.key, ws.id, t2), 404);
    expectProblem(await complete(m1.key, ws.id, { prompt: 'hijack', threadId: t2 }), 404);
  });

  it('a PRIVATE workspace and another team see nothing', async () => {
    const { team, ws } = await setup('OPENAI', {}, { sharingType: 'PRIVATE' });
    const member = await team.addUser('member');
    const other: TeamFixture = await newTeam(t);
    const threadId = expectStatus(await complete(team.ownerKey, ws.id, { prompt: 'secret plans' }), 200).threadId;
    const one = at({ workspaceId: ws.id, threadId });
    const all = at({ workspaceId: ws.id });
    for (const key of [member.key, other.ownerKey]) {
      const api = t.api(key);
      expectProblem(await complete(key, ws.id, { prompt: 'x' }), 404);
      expectProblem(await history$(key, ws.id), 404);
      expectProblem(await thread$(key, ws.id, threadId), 404);
      expectProblem(await api.POST('/api/v1/chat/{workspaceId}/history/{threadId}', { ...one, body: { title: 'x' } }), 404);
      expectProblem(await api.DELETE('/api/v1/chat/{workspaceId}/history/{threadId}', one), 404);
      expectProblem(await api.DELETE('/api/v1/chat/{workspaceId}/history', all), 404);
      expectProblem(await api.GET('/api/v1/chat/{workspaceId}/greeting', all), 404);
      expectProblem(await api.GET('/api/v1/chat/{workspaceId}/sample-prompts', all), 404);
    }
    expect(await ids(team.ownerKey, ws.id)).toEqual([threadId]);
  });
});

describe('greeting and sample prompts', () => {
  it('uses the workspace’s own, else defaults drawn from the workspace', async () => {
    const { team, model, ws } = await setup('OPENAI', { name: 'Helper Bot' });
    const api = t.api(team.ownerKey);
    const path = { workspaceId: ws.id };
    const samples = (limit?: number) => api.GET('/api/v1/chat/{workspaceId}/sample-prompts', { params: { path, query: limit === undefined ? {} : { limit } } });
    const g = expectStatus(await api.GET('/api/v1/chat/{workspaceId}/greeting', at(path)), 200);
    expect(g.content).toContain(ws.name as string);
    expect(g.content).toContain('Helper Bot');
    const d = expectStatus(await samples(), 200);
    expect(d).toHaveLength(6);
    expect(d.some((p) => p.content.includes(ws.name as string))).toBe(true);
    expect(expectStatus(await samples(2), 200)).toHaveLength(2);
    expectProblem(await samples(51), 400);
    expectProblem(await samples(0), 400);

    await api.PATCH('/api/v1/workspaces/{workspaceId}', { ...at(path), body: { greeting: 'Hello team', samplePrompts: ['p1', 'p2', 'p3'] } });
    expect(expectStatus(await api.GET('/api/v1/chat/{workspaceId}/greeting', at(path)), 200)).toEqual({ content: 'Hello team' });
    expect(expectStatus(await samples(2), 200)).toEqual([{ content: 'p1' }, { content: 'p2' }]);
    void model;
  });
});
