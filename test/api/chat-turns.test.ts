import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { watchStatements } from '../../src/db/driver.js';
import { promptLogs } from '../../src/db/schema/prompt-logs.js';
import { ChatRepo } from '../../src/modules/chat/repo.js';
import { expectStatus, multipartBody, type paths } from '../helpers/api.js';
import { expectProblem, newTeam, startTestApp, testConfig, type TestApp } from '../helpers/app.js';
import { createModel, createWorkspace } from '../helpers/factories.js';
import { parseSse, parseSseControl } from '../helpers/sse.js';
import { useStandIn } from '../support/use-standin.js';

/** The turn pipeline's guarantees: stream framing, final prompt logs, statements per turn. */
const s = useStandIn();
let t: TestApp;
/** The embedded database on disk (ATRIUM_TEST_EMBEDDED=thread): plain answers are acknowledged through the answer journal. */
const journaled = testConfig().databaseUrl === null && testConfig().embeddedDbThread;

beforeAll(async () => {
  // a fast heartbeat and sweep, so both can be observed without waiting (nothing here asserts on time)
  // no embedding worker: its look for files to embed (every 2 s) reads plus_ tables, which a turn's statement count would take for the turn's
  t = await startTestApp({
    providerTimeouts: { connectMs: 2000, totalMs: 3000, idleMs: 2000 },
    sseHeartbeatMs: 20,
    promptLogSweepMs: 50,
    embeddings: { ...testConfig().embeddings, workerIntervalMs: 0 },
  });
});
afterAll(() => t.close());

async function setup() {
  const team = await newTeam(t);
  const model = await createModel(t, team.ownerKey, { url: s.standIn.openaiBaseUrl });
  const ws = await createWorkspace(t, team.ownerKey, { modelIds: [model.id] });
  return { team, model, ws };
}

type Completion = paths['/api/v1/chat/{workspaceId}/completions']['post']['requestBody']['content']['application/json'];
const wsAt = (workspaceId: string) => ({ params: { path: { workspaceId } } });

const complete = (key: string, wsId: string, body: Completion) => t.api(key).POST('/api/v1/chat/{workspaceId}/completions', { ...wsAt(wsId), body });

/** The streamed turn, its body read live as the server writes it. */
async function openStream(key: string, wsId: string, body: Completion) {
  const { data, response } = await t.api(key).POST('/api/v1/chat/{workspaceId}/completions/stream', {
    ...wsAt(wsId),
    body,
    headers: { accept: 'text/event-stream' },
    parseAs: 'stream',
  });
  return { status: response.status, body: data as ReadableStream<Uint8Array> };
}

/** Read a stream until `until` holds for the text so far (or the stream ends). */
async function readUntil(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  text: string,
  until: (text: string) => boolean,
): Promise<{ text: string; ended: boolean }> {
  const dec = new TextDecoder();
  while (!until(text)) {
    const r = await reader.read();
    if (r.done) return { text, ended: true };
    text += dec.decode(r.value, { stream: true });
  }
  return { text, ended: false };
}

async function logsOf(key: string) {
  return expectStatus(await t.api(key).GET('/api/v1/chat/prompt-logs/paged', { params: { query: { size: 100 } } }), 200).content;
}

describe('stream framing', () => {
  it('sends retry once inside the first event, an increasing id on every event, and ping comments while the provider is slow', async () => {
    const { team, ws } = await setup();
    s.standIn.set({ chunkDelayMs: 120 });
    const res = await openStream(team.ownerKey, ws.id, { prompt: 'one two three four' });
    expect(res.status).toBe(200);
    const text = await new Response(res.body).text();
    const events = parseSse(text);
    expect(events[0]!.event).toBe('start');
    expect(events.at(-1)!.event).toBe('done');
    expect(events.map((e) => e.id)).toEqual(events.map((_, i) => String(i + 1)));
    const control = parseSseControl(text);
    expect(control.retry).toEqual([3000]);
    // inside the start event, never a block of its own (a block without data reads as an empty event)
    expect(text.startsWith('retry: 3000\nid: 1\nevent: start\ndata: ')).toBe(true);
    // 20 ms heartbeat against 120 ms gaps between chunks
    expect(control.pings).toBeGreaterThan(0);
  });
});

describe('prompt logs always end final', () => {
  it('a thread deleted under a running stream ends the stream with a 409 error and the log interrupted', async () => {
    const { team, ws } = await setup();
    s.standIn.set({ chunkDelayMs: 150 });
    const res = await openStream(team.ownerKey, ws.id, { prompt: 'alpha beta gamma delta epsilon zeta' });
    expect(res.status).toBe(200);
    const reader = res.body.getReader();
    let { text } = await readUntil(reader, '', (s) => s.includes('event: delta'));
    const start = parseSse(text.slice(0, text.lastIndexOf('\n\n'))).find((e) => e.event === 'start')!;
    const threadId = start.data.threadId as string;
    const thread = { params: { path: { workspaceId: ws.id, threadId } } };
    expectStatus(await t.api(team.ownerKey).DELETE('/api/v1/chat/{workspaceId}/history/{threadId}', thread), 200);
    ({ text } = await readUntil(reader, text, () => false));
    const events = parseSse(text);
    expect(events.at(-1)).toMatchObject({ event: 'error', data: { status: 409, code: 'thread_deleted' } });
    const log = (await logsOf(team.ownerKey)).find((l) => l.threadId === threadId)!;
    expect(log.status).toBe('interrupted');
    expect(String(log.error)).toMatch(/^thread_deleted/);
    expect(String(log.response)).toContain('Echo: alpha');
    expectProblem(await t.api(team.ownerKey).GET('/api/v1/chat/{workspaceId}/history/{threadId}', thread), 404);
  });

  it('a workspace deleted under a plain completion answers 409 and ends the log', async () => {
    const { team, ws } = await setup();
    s.standIn.set({ delayMs: 400 });
    const pending = complete(team.ownerKey, ws.id, { prompt: 'are you still there' });
    // A plain answer to a new thread is written whole once answered: its workspace goes while the provider answers.
    while (s.standIn.inFlight === 0) await new Promise((r) => setTimeout(r, 10));
    expectStatus(await t.api(team.ownerKey).DELETE('/api/v1/workspaces/{workspaceId}', wsAt(ws.id)), 200);
    if (journaled) {
      // acknowledged once journaled (docs/DECISIONS.md, "Gateway hot path"): the answer went with its thread
      expectStatus(await pending, 200);
    } else {
      const p = expectProblem(await pending, 409);
      expect(p.code).toBe('thread_deleted');
    }
    const [log] = await logsOf(team.ownerKey);
    expect(log).toMatchObject({ status: 'interrupted', prompt: 'are you still there' });
  });

  it.skipIf(journaled)('a plain answer to a new thread whose one statement fails still leaves its log, failed', async () => {
    const { team, ws } = await setup();
    const refused = vi.spyOn(ChatRepo.prototype, 'recordWholeTurns').mockRejectedValue(new Error('the database is gone'));
    try {
      expect((await complete(team.ownerKey, ws.id, { prompt: 'called, never stored' })).response.status).toBe(500);
      expect(refused).toHaveBeenCalled();
    } finally {
      refused.mockRestore();
    }
    // the provider was called: the attempt is in the logs, though nothing else of the turn is
    expect((await logsOf(team.ownerKey)).find((l) => l.prompt === 'called, never stored')).toMatchObject({
      status: 'error',
      error: expect.stringMatching(/^internal: the turn stopped/),
    });
  });

  it('a new thread whose write fails keeps nothing, and is answered with the failure wherever the answer waits for the write', async () => {
    const { team, ws } = await setup();
    // The provider call of a new thread starts beside its first write; the write failing must still fail the turn.
    const marker = `refused by the database ${randomUUID()}`;
    const fn = `refuse_${randomUUID().replace(/-/g, '')}`;
    await t.database.db.execute(
      sql.raw(`create function ${fn}() returns trigger language plpgsql as $$ begin
        if new.prompt = '${marker}' then raise exception 'refused for the test'; end if; return new; end $$`),
    );
    await t.database.db.execute(sql.raw(`create trigger ${fn} before insert on prompt_logs for each row execute function ${fn}()`));
    try {
      const api = t.api(team.ownerKey);
      // A plain answer to a new thread is written whole once answered; journaled, it goes out before
      // the database refuses it (reported, and tried again by the next start: answer-journal.test.ts).
      const paths = journaled
        ? (['/api/v1/chat/{workspaceId}/completions/stream'] as const)
        : (['/api/v1/chat/{workspaceId}/completions', '/api/v1/chat/{workspaceId}/completions/stream'] as const);
      for (const path of paths) {
        const res = await api.POST(path, { ...wsAt(ws.id), body: { prompt: marker } });
        expect(res.response.status).toBe(500);
        expect(JSON.stringify(res.error ?? res.data)).not.toContain('Echo:');
      }
      if (!journaled) {
        const v1 = await api.POST('/v1/chat/completions', { body: { model: `workspace/${ws.id}`, messages: [{ role: 'user', content: marker }] } });
        expect(v1.response.status).toBe(500);
        expect(JSON.stringify(v1.error ?? v1.data)).not.toContain('Echo:');
      }
    } finally {
      await t.database.db.execute(sql.raw(`drop trigger ${fn} on prompt_logs`));
      await t.database.db.execute(sql.raw(`drop function ${fn}()`));
    }
    expect(await logsOf(team.ownerKey)).toEqual([]);
    const threads = expectStatus(await t.api(team.ownerKey).GET('/api/v1/chat/{workspaceId}/history', wsAt(ws.id)), 200);
    expect(JSON.stringify(threads)).not.toContain(marker);
  });

  it('an answer whose statement committed but whose connection then failed is answered as stored, and stored once', async () => {
    const { team, ws } = await setup();
    // the statement runs, then the driver reports a failure (a connection dropped as it committed)
    const committedThenLost = (method: 'recordWholeTurns' | 'recordAnswers') => {
      const original = ChatRepo.prototype[method] as (...a: unknown[]) => Promise<unknown>;
      return vi.spyOn(ChatRepo.prototype, method).mockImplementationOnce(async function (this: ChatRepo, ...args: unknown[]) {
        await original.apply(this, args);
        throw new Error('Connection terminated unexpectedly');
      } as never);
    };
    const whole = committedThenLost('recordWholeTurns');
    const plain = expectStatus(await complete(team.ownerKey, ws.id, { prompt: 'stored, then the line dropped' }), 200);
    expect(whole).toHaveBeenCalled();
    whole.mockRestore();
    // a stream's answer is its statement 2
    const second = committedThenLost('recordAnswers');
    const res = await t.api(team.ownerKey).POST('/api/v1/chat/{workspaceId}/completions/stream', {
      ...wsAt(ws.id),
      body: { prompt: 'and again', threadId: plain.threadId },
      parseAs: 'text',
    });
    expect(second).toHaveBeenCalled();
    second.mockRestore();
    expect(parseSse(res.data as unknown as string).at(-1)).toMatchObject({ event: 'done' });
    const thread = expectStatus(
      await t.api(team.ownerKey).GET('/api/v1/chat/{workspaceId}/history/{threadId}', { params: { path: { workspaceId: ws.id, threadId: plain.threadId } } }),
      200,
    );
    expect(thread.messages.map((m) => m.content)).toEqual([
      'stored, then the line dropped',
      'Echo: stored, then the line dropped',
      'and again',
      'Echo: and again',
    ]);
    expect((await logsOf(team.ownerKey)).map((l) => [l.prompt, l.status])).toEqual([
      ['and again', 'ok'],
      ['stored, then the line dropped', 'ok'],
    ]);
  });

  it('a follow-up to a deleted thread is a 404 that stores nothing', async () => {
    const { team, ws } = await setup();
    const first = expectStatus(await complete(team.ownerKey, ws.id, { prompt: 'first' }), 200);
    const thread = { params: { path: { workspaceId: ws.id, threadId: first.threadId } } };
    expectStatus(await t.api(team.ownerKey).DELETE('/api/v1/chat/{workspaceId}/history/{threadId}', thread), 200);
    expectProblem(await complete(team.ownerKey, ws.id, { prompt: 'second', threadId: first.threadId }), 404);
    // (an earlier test's aborted early call may still arrive: only this test's prompts count)
    expect(s.standIn.requests.map((r) => JSON.stringify(r.body)).filter((b) => b.includes('"second"') || b.includes('"first"'))).toHaveLength(1);
    expect((await logsOf(team.ownerKey)).map((l) => l.prompt)).toEqual(['first']);
  });

  it('the sweep finishes logs a crashed node left pending, and only those', async () => {
    const { team } = await setup();
    const me = expectStatus(await t.api(team.ownerKey).GET('/api/v1/me'), 200);
    const crashed = randomUUID();
    const running = randomUUID();
    const base = { teamId: team.teamId, userId: me.user.id, status: 'pending' as const };
    await t.database.db.insert(promptLogs).values([
      // older than the longest possible call (total timeout + margin): its request cannot still be running
      { ...base, id: crashed, prompt: 'lost in a crash', created: new Date(Date.now() - 10 * 60_000) },
      { ...base, id: running, prompt: 'still running', created: new Date() },
    ]);
    let logs = await logsOf(team.ownerKey);
    for (let i = 0; i < 200 && logs.find((l) => l.id === crashed)!.status === 'pending'; i++) {
      await new Promise((r) => setTimeout(r, 25));
      logs = await logsOf(team.ownerKey);
    }
    expect(logs.find((l) => l.id === crashed)).toMatchObject({ status: 'interrupted', error: expect.stringMatching(/^abandoned/) });
    expect(logs.find((l) => l.id === running)).toMatchObject({ status: 'pending' });
    // idempotent, and safe to run from any node at any time
    expect(await t.services.promptLogs.sweep()).toBe(0);
  });
});

describe('statements per turn', () => {
  /** The SQL the app sends while `fn` runs (on the app's one database handle). */
  async function statementsDuring(fn: () => Promise<unknown>): Promise<string[]> {
    const seen: string[] = [];
    watchStatements(t.database.db, (q) => void seen.push(q));
    try {
      await fn();
    } finally {
      watchStatements(t.database.db, null);
    }
    return seen;
  }
  const turnTables = /chat_threads|chat_messages|prompt_logs|plus_/;
  /** the sweeps this file's app runs every 50 ms (stale logs, and on PostgreSQL the reservations they held) */
  const sweeps = /^update "prompt_logs" set "status" = \$1, "error" = \$2 where|^\s*with taken as \(update prompt_logs p set reservation = null/;
  /** a turn's writes among `seen` (not the sweeps, nor any read) */
  const writes = (seen: string[]) => seen.filter((q) => /\b(insert into|update)\s+"?(chat_threads|chat_messages|prompt_logs)\b/.test(q) && !sweeps.test(q));

  it('a plain follow-up reads its thread before the call and writes nothing until answered, then one statement; a streamed one keeps its two writes', async () => {
    const { team, ws } = await setup();
    const first = expectStatus(await complete(team.ownerKey, ws.id, { prompt: 'first question' }), 200);
    const history = { params: { path: { workspaceId: ws.id, threadId: first.threadId } } };
    // (journaled, the first turn's statement may still be running: this read waits for it)
    expectStatus(await t.api(team.ownerKey).GET('/api/v1/chat/{workspaceId}/history/{threadId}', history), 200);
    s.standIn.reset();
    let res: Awaited<ReturnType<typeof complete>> | undefined;
    const seen = await statementsDuring(async () => {
      res = await complete(team.ownerKey, ws.id, { prompt: 'second question', threadId: first.threadId });
      // (journaled, the answer went out before its statement ended: the database runs this after it)
      await t.database.db.execute(sql`select 1 as settled`);
    });
    const second = expectStatus(res!, 200);
    // the history came from the read
    expect(s.standIn.requests[0]!.body.messages.map((m: { content: string }) => m.content)).toEqual([
      'first question',
      'Echo: first question',
      'second question',
    ]);
    // this file's app sweeps every 50 ms (stale logs, and on PostgreSQL the reservations they held): no part of the turn
    const turn = seen.filter((q) => !sweeps.test(q) && q !== 'select 1 as settled');
    const ofTurn = turn.filter((q) => turnTables.test(q));
    expect(ofTurn, turn.join('\n---\n')).toHaveLength(2);
    expect(writes(seen), turn.join('\n---\n')).toHaveLength(1);
    // the read came first: nothing of the turn was written before the provider answered
    expect(writes([ofTurn[0]!])).toEqual([]);
    // anything else can only be a cache refill (key, workspace, model) or, on PostgreSQL, the key,
    // which every node reads on every request so that a revocation binds at once; the team's
    // budgets were read at the revision that key read gives by the first turn
    for (const q of turn.filter((s) => !turnTables.test(s))) expect(q).toMatch(/api_keys|workspaces|models/);
    // the thread reads back in order, and a streamed follow-up (the thread shown while it streams) writes twice
    const streamed = await statementsDuring(async () => {
      const r = await t.api(team.ownerKey).POST('/api/v1/chat/{workspaceId}/completions/stream', {
        ...wsAt(ws.id),
        body: { prompt: 'third question', threadId: second.threadId },
        parseAs: 'text',
      });
      expect(r.data).toContain('event: done');
    });
    expect(
      writes(streamed).filter((q) => !q.includes('Echo: second question')),
      streamed.join('\n---\n'),
    ).toHaveLength(2);
    const thread = expectStatus(await t.api(team.ownerKey).GET('/api/v1/chat/{workspaceId}/history/{threadId}', history), 200);
    expect(thread.messages.map((m) => m.content)).toEqual([
      'first question',
      'Echo: first question',
      'second question',
      'Echo: second question',
      'third question',
      'Echo: third question',
    ]);
    expect((await logsOf(team.ownerKey)).map((l) => [l.prompt, l.status])).toEqual([
      ['third question', 'ok'],
      ['second question', 'ok'],
      ['first question', 'ok'],
    ]);
  });

  it('a thread deleted while a plain follow-up is answered keeps nothing of the turn; its log ends interrupted', async () => {
    const { team, ws } = await setup();
    const first = expectStatus(await complete(team.ownerKey, ws.id, { prompt: 'before' }), 200);
    s.standIn.set({ delayMs: 400 });
    const pending = complete(team.ownerKey, ws.id, { prompt: 'while it goes', threadId: first.threadId });
    while (s.standIn.inFlight === 0) await new Promise((r) => setTimeout(r, 10));
    const thread = { params: { path: { workspaceId: ws.id, threadId: first.threadId } } };
    expectStatus(await t.api(team.ownerKey).DELETE('/api/v1/chat/{workspaceId}/history/{threadId}', thread), 200);
    if (journaled) expectStatus(await pending, 200);
    else expect(expectProblem(await pending, 409).code).toBe('thread_deleted');
    const log = (await logsOf(team.ownerKey)).find((l) => l.prompt === 'while it goes');
    expect(log).toMatchObject({ status: 'interrupted', error: expect.stringMatching(/^thread_deleted/) });
    expectProblem(await t.api(team.ownerKey).GET('/api/v1/chat/{workspaceId}/history/{threadId}', thread), 404);
    const left = (await t.database.db.execute(sql`select count(*)::int as n from chat_messages where thread_id = ${first.threadId}::uuid`)) as unknown as {
      rows: Array<{ n: number }>;
    };
    expect(Number(left.rows[0]!.n)).toBe(0);
  });

  it('a plain answer to a new thread is one statement once answered (thread, both messages, the finished log); a stream keeps two', async () => {
    const { team, ws } = await setup();
    const history = (threadId: string) =>
      t.api(team.ownerKey).GET('/api/v1/chat/{workspaceId}/history/{threadId}', { params: { path: { workspaceId: ws.id, threadId } } });
    let plain: Awaited<ReturnType<typeof complete>> | undefined;
    let thread: Awaited<ReturnType<typeof history>> | undefined;
    // (the thread is read inside: a journaled statement may still be running when its answer arrives)
    const one = await statementsDuring(async () => {
      plain = await complete(team.ownerKey, ws.id, { prompt: 'one statement' });
      thread = await history(expectStatus(plain, 200).threadId);
    });
    const stored = expectStatus(plain!, 200);
    expect(writes(one), one.join('\n---\n')).toHaveLength(1);
    expect(expectStatus(thread!, 200).messages.map((m) => [m.role, m.content])).toEqual([
      ['user', 'one statement'],
      ['assistant', 'Echo: one statement'],
    ]);
    expect((await logsOf(team.ownerKey)).find((l) => l.prompt === 'one statement')).toMatchObject({ status: 'ok', response: 'Echo: one statement' });
    const two = await statementsDuring(async () => {
      const res = await t
        .api(team.ownerKey)
        .POST('/api/v1/chat/{workspaceId}/completions/stream', { ...wsAt(ws.id), body: { prompt: 'streamed' }, parseAs: 'text' });
      expect(res.data).toContain('event: done');
    });
    expect(writes(two), two.join('\n---\n')).toHaveLength(2);
    // the thread continues from its answer
    expectStatus(await complete(team.ownerKey, ws.id, { prompt: 'and then', threadId: stored.threadId }), 200);
    expect(s.standIn.requests.at(-1)!.body.messages.map((m: { content: string }) => m.content)).toEqual(['one statement', 'Echo: one statement', 'and then']);
  });

  it('a follow-up in a thread with files also searches them', async () => {
    const { team, ws } = await setup();
    const api = t.api(team.ownerKey);
    const first = expectStatus(await complete(team.ownerKey, ws.id, { prompt: 'what about the zebra' }), 200);
    const plus = expectStatus(await api.POST('/api/v1/plus', multipartBody([{ name: 'title', value: 'Notes' }])), 200);
    const zoo = { name: 'files', filename: 'zoo.txt', contentType: 'text/plain', value: 'The zebra sleeps standing up in the savanna.' };
    const added = await api.POST('/api/v1/chat/{plusId}/add-file', {
      params: { path: { plusId: plus.id }, query: { threadId: first.threadId } },
      ...multipartBody([zoo]),
    });
    expect(added.response.status).toBe(200);
    const second = expectStatus(await complete(team.ownerKey, ws.id, { prompt: 'where does the zebra sleep', threadId: first.threadId }), 200);
    expect(second.sources.map((src) => src.filename)).toEqual(['zoo.txt']);
  });
});
