/**
 * The embedded database's answer journal (src/modules/chat/answer-journal.ts): a plain answer is
 * acknowledged once its statement (statement 2, or a new thread's whole turn) is journaled and sent; one that was never stored is stored
 * by the next start, before any request.
 */
import { appendFileSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { AnswerJournal } from '../../src/modules/chat/answer-journal.js';
import { backup, restore } from '../../src/ops/backup.js';
import { ChatRepo, type AnswerRecord } from '../../src/modules/chat/repo.js';
import { expectStatus } from '../helpers/api.js';
import { newTeam, startTestApp, testConfig, type TestApp } from '../helpers/app.js';
import { createModel, createWorkspace } from '../helpers/factories.js';
import { useStandIn } from '../support/use-standin.js';

const onPostgres = testConfig().databaseUrl !== 'memory://' && testConfig().databaseUrl !== null;
const tmp = () => mkdtempSync(path.join(tmpdir(), 'atrium-journal-'));

function record(logId: string, images = false): AnswerRecord {
  return {
    threadId: '00000000-0000-4000-8000-000000000001',
    message: {
      id: '00000000-0000-4000-8000-000000000002',
      parentId: null,
      content: 'an answer',
      modelId: '00000000-0000-4000-8000-000000000003',
      usage: null,
      sources: [],
      status: 'ok',
      error: null,
      toolCalls: null,
      ...(images ? { imageRows: [{} as never] } : {}),
    },
    logId,
    log: { response: 'an answer', promptTokens: 1, completionTokens: 2, latencyMs: 3, status: 'ok', error: null },
    now: new Date('2026-12-07T10:00:00.000Z'),
    ledger: {
      id: logId,
      teamId: 't',
      userId: 1,
      apiKeyId: null,
      workspaceId: 'w',
      modelId: 'm',
      modelName: 'n',
      promptTokens: 1,
      completionTokens: 2,
      credits: 0,
      status: 'ok',
      created: new Date('2026-12-07T10:00:01.000Z'),
    },
    settle: null,
  };
}

describe('the answer journal file', () => {
  it('gives back what an earlier process appended, with its dates, skipping a line cut short', () => {
    const dir = tmp();
    const first = AnswerJournal.open(dir);
    first.append(record('a'));
    first.append(record('b'));
    first.close();
    appendFileSync(path.join(dir, 'answers.journal'), '{"threadId":"cut sh');
    const again = AnswerJournal.open(dir);
    const left = again.leftOver();
    expect(left.map((r) => r.logId)).toEqual(['a', 'b']);
    expect(left[0]!.now).toEqual(new Date('2026-12-07T10:00:00.000Z'));
    expect(left[0]!.ledger.created).toEqual(new Date('2026-12-07T10:00:01.000Z'));
    again.empty();
    expect(again.leftOver()).toEqual([]);
    again.close();
  });

  it('is emptied once no answer is in flight, keeping the lines of answers whose statement failed', () => {
    const dir = tmp();
    const j = AnswerJournal.open(dir);
    const a = j.append(record('a'))!;
    j.append(record('b'));
    j.stored();
    expect(j.leftOver()).toHaveLength(2); // one still in flight
    j.stored();
    expect(statSync(path.join(dir, 'answers.journal')).size).toBe(0);
    j.append(record('c'));
    j.append(record('d'));
    j.failed(a); // (a line as append answered it)
    j.stored();
    expect(j.leftOver().map((r) => r.logId)).toEqual(['a']);
    j.close();
    expect(
      AnswerJournal.open(dir)
        .leftOver()
        .map((r) => r.logId),
    ).toEqual(['a']);
  });

  it('takes no answer with image bytes or a NUL character, and none once closed', () => {
    const j = AnswerJournal.open(tmp());
    expect(j.append(record('a'))).not.toBeNull();
    expect(j.append(record('b', true))).toBeNull();
    const nul = record('c');
    nul.message!.content = 'a\u0000b';
    expect(j.append(nul)).toBeNull();
    j.close();
    expect(j.append(record('d'))).toBeNull();
  });
});

describe.skipIf(onPostgres)('answers acknowledged through the journal (the embedded database on disk)', () => {
  const s = useStandIn();
  const apps: TestApp[] = [];
  afterEach(async () => {
    vi.restoreAllMocks();
    for (const a of apps.splice(0)) await a.close();
  });

  /** The embedded database in `dataDir`, as `npm start` runs it (started again: the next start). */
  async function start(dataDir: string): Promise<TestApp> {
    const t = await startTestApp({ databaseUrl: null, embeddedDbThread: true, dataDir, secretKey: null });
    apps.push(t);
    return t;
  }

  /** A thread's messages, as [role, content]. */
  async function messagesOf(t: TestApp, key: string, workspaceId: string, threadId: string): Promise<string[][]> {
    const thread = expectStatus(await t.api(key).GET('/api/v1/chat/{workspaceId}/history/{threadId}', { params: { path: { workspaceId, threadId } } }), 200);
    return thread.messages.map((m) => [m.role, m.content]);
  }

  async function setUp(dataDir: string) {
    const t = await start(dataDir);
    const team = await newTeam(t);
    const model = await createModel(t, team.ownerKey, { url: s.standIn.openaiBaseUrl, apiKey: 'sk-stand-in-key-0123' });
    const ws = await createWorkspace(t, team.ownerKey, { modelIds: [model.id] });
    return { t, team, ws };
  }

  it('a plain answer is in the thread for the very next request, and the next turn follows it', async () => {
    const { t, team, ws } = await setUp(tmp());
    const path_ = { params: { path: { workspaceId: ws.id } } };
    const first = expectStatus(await t.api(team.ownerKey).POST('/api/v1/chat/{workspaceId}/completions', { ...path_, body: { prompt: 'one' } }), 200);
    const next = expectStatus(
      await t.api(team.ownerKey).POST('/api/v1/chat/{workspaceId}/completions', { ...path_, body: { prompt: 'two', threadId: first.threadId } }),
      200,
    );
    expect(await messagesOf(t, team.ownerKey, ws.id, next.threadId)).toEqual([
      ['user', 'one'],
      ['assistant', 'Echo: one'],
      ['user', 'two'],
      ['assistant', 'Echo: two'],
    ]);
  });

  /** Every answer's statement fails from now on (a turn written whole, or a statement 2), as if the process had been killed before it ran. */
  function refuseAnswers(message: string) {
    return [
      vi.spyOn(ChatRepo.prototype, 'recordWholeTurns').mockRejectedValue(new Error(message)),
      vi.spyOn(ChatRepo.prototype, 'recordAnswers').mockRejectedValue(new Error(message)),
    ];
  }

  it('answers acknowledged but never stored (their statement failed) are stored by the next start: a new thread and a follow-up whole, a regenerate', async () => {
    const dataDir = tmp();
    const { t, team, ws } = await setUp(dataDir);
    const post = (body: { prompt?: string; threadId?: string; regenerate?: string }) =>
      t.api(team.ownerKey).POST('/api/v1/chat/{workspaceId}/completions', { params: { path: { workspaceId: ws.id } }, body });
    const earlier = expectStatus(await post({ prompt: 'stored' }), 200);
    const other = expectStatus(await post({ prompt: 'again please' }), 200);
    const refused = refuseAnswers('the statement never ran');
    const fresh = expectStatus(await post({ prompt: 'keep me' }), 200);
    const followUp = expectStatus(await post({ prompt: 'and me', threadId: earlier.threadId }), 200);
    // a regenerate still has its statement 1 (it attaches to a stored question), so its answer is a statement 2
    const regenerated = expectStatus(await post({ regenerate: other.messageId }), 200);
    for (const spy of refused) expect(spy).toHaveBeenCalled();
    expect(fresh.message.content).toBe('Echo: keep me');
    await apps.pop()!.close();
    vi.restoreAllMocks();
    expect(readFileSync(path.join(dataDir, 'answers.journal'), 'utf8')).toContain('Echo: keep me');

    const again = await start(dataDir);
    expect(await messagesOf(again, team.ownerKey, ws.id, fresh.threadId)).toEqual([
      ['user', 'keep me'],
      ['assistant', 'Echo: keep me'],
    ]);
    expect(await messagesOf(again, team.ownerKey, ws.id, followUp.threadId)).toEqual([
      ['user', 'stored'],
      ['assistant', 'Echo: stored'],
      ['user', 'and me'],
      ['assistant', 'Echo: and me'],
    ]);
    const thread = expectStatus(
      await again
        .api(team.ownerKey)
        .GET('/api/v1/chat/{workspaceId}/history/{threadId}', { params: { path: { workspaceId: ws.id, threadId: other.threadId } } }),
      200,
    );
    expect(thread.messages.at(-1)?.id).toBe(regenerated.messageId);
    const logs = expectStatus(await again.api(team.ownerKey).GET('/api/v1/chat/prompt-logs/paged', { params: { query: { size: 10 } } }), 200).content;
    expect(logs.map((l) => [l.prompt, l.status, l.response]).sort()).toEqual([
      ['again please', 'ok', 'Echo: again please'],
      ['again please', 'ok', 'Echo: again please'],
      ['and me', 'ok', 'Echo: and me'],
      ['keep me', 'ok', 'Echo: keep me'],
      ['stored', 'ok', 'Echo: stored'],
    ]);
    expect(statSync(path.join(dataDir, 'answers.journal')).size).toBe(0);
  });

  it('a backup taken while an answer is acknowledged but not stored restores with that answer', async () => {
    const dataDir = tmp();
    const { t, team, ws } = await setUp(dataDir);
    refuseAnswers('not stored yet');
    const answered = expectStatus(
      await t.api(team.ownerKey).POST('/api/v1/chat/{workspaceId}/completions', { params: { path: { workspaceId: ws.id } }, body: { prompt: 'in flight' } }),
      200,
    );
    const file = path.join(tmp(), 'atrium.backup');
    const env = { ADMIN_API_KEY: 'x'.repeat(40), LOG_LEVEL: 'silent' };
    expect(await backup(loadConfig({ ...env, DATA_DIR: dataDir }), file)).toContain('from the running server');
    await apps.pop()!.close();
    vi.restoreAllMocks();

    const target = path.join(tmp(), 'data');
    await restore(loadConfig({ ...env, DATA_DIR: target }), file);
    const restored = await start(target);
    expect((await messagesOf(restored, team.ownerKey, ws.id, answered.threadId)).at(-1)).toEqual(['assistant', 'Echo: in flight']);
  });

  it('a start stores the answers it can and is not held up by one the database refuses', async () => {
    const dataDir = tmp();
    const { t, team, ws } = await setUp(dataDir);
    refuseAnswers('not stored');
    const post = (prompt: string) =>
      t.api(team.ownerKey).POST('/api/v1/chat/{workspaceId}/completions', { params: { path: { workspaceId: ws.id } }, body: { prompt } });
    const good = expectStatus(await post('good'), 200);
    expectStatus(await post('bad'), 200);
    await apps.pop()!.close();
    vi.restoreAllMocks();
    // the second line's message id is no uuid: the database refuses it
    const file = path.join(dataDir, 'answers.journal');
    const lines = readFileSync(file, 'utf8').trim().split('\n');
    expect(lines).toHaveLength(2);
    const bad = JSON.parse(lines[1]!) as AnswerRecord;
    bad.message!.id = 'not-a-uuid';
    writeFileSync(file, `${lines[0]}\n${JSON.stringify(bad)}\n`);

    const again = await start(dataDir);
    expect((await messagesOf(again, team.ownerKey, ws.id, good.threadId)).at(-1)).toEqual(['assistant', 'Echo: good']);
    const logs = expectStatus(await again.api(team.ownerKey).GET('/api/v1/chat/prompt-logs/paged', { params: { query: { size: 10 } } }), 200).content;
    // a new thread's turn is written whole: the one refused is still in the logs, as failed (and the start reports it)
    expect(logs.map((l) => [l.prompt, l.status, l.response]).sort()).toEqual([
      ['bad', 'error', 'Echo: bad'],
      ['good', 'ok', 'Echo: good'],
    ]);
    expect(logs.find((l) => l.prompt === 'bad')?.error).toMatch(/^internal: the answer was acknowledged, but the database refused/);
  });
});
