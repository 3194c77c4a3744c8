/** Paging back through a long thread: `limit` and the `before` cursor of GET …/history/{threadId}. */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { expectProblem, newTeam, startTestApp, type TestApp } from '../helpers/app.js';
import { createModel, createWorkspace } from '../helpers/factories.js';
import { expectShape } from '../helpers/shape.js';
import { ChatThreadFull } from '../../src/modules/chat/schema.js';
import { startStandInProvider, type StandInProvider } from '../support/standin-provider.js';

let t: TestApp;
let standIn: StandInProvider;

beforeAll(async () => {
  standIn = await startStandInProvider();
  t = await startTestApp();
});
afterAll(async () => {
  await t.close();
  await standIn.close();
});
beforeEach(() => standIn.reset());

const TURNS = 7;

/** A workspace whose thread has TURNS turns (2 × TURNS messages: "question i" / "Echo: question i"). */
async function longThread(history: 'TEAM' | 'USER' = 'TEAM') {
  const team = await newTeam(t);
  const m = await createModel(t, team.ownerKey, { url: standIn.openaiBaseUrl, baseModel: 'gpt-test', apiKey: 'sk-test' });
  const ws = await createWorkspace(t, team.ownerKey, { modelIds: [m.id], chatHistoryType: history });
  let threadId: string | undefined;
  for (let i = 1; i <= TURNS; i++) {
    const res = await t.request({
      method: 'POST',
      url: `/api/v1/chat/${ws.id}/completions`,
      key: team.ownerKey,
      payload: { prompt: `question ${i}`, ...(threadId ? { threadId } : {}) },
    });
    expect(res.statusCode).toBe(200);
    threadId = res.json().threadId as string;
  }
  return { team, ws, threadId: threadId! };
}

const url = (wsId: string, threadId: string, query = '') => `/api/v1/chat/${wsId}/history/${threadId}${query}`;
const contents = (page: { messages: Array<{ content: string }> }) => page.messages.map((m) => m.content);

describe('thread history paging', () => {
  it('pages back from the newest message to the first, each page oldest first, without gaps or repeats', async () => {
    const { team, ws, threadId } = await longThread();
    const all = expectShape(ChatThreadFull, (await t.request({ method: 'GET', url: url(ws.id, threadId), key: team.ownerKey })).json());
    expect(all.messages).toHaveLength(2 * TURNS);
    expect(all.hasEarlier).toBeUndefined();

    const seen: string[][] = [];
    let query = '?limit=4';
    for (;;) {
      const res = await t.request({ method: 'GET', url: url(ws.id, threadId, query), key: team.ownerKey });
      expect(res.statusCode).toBe(200);
      const page = expectShape(ChatThreadFull, res.json());
      expect(page.messageCount).toBe(2 * TURNS);
      seen.unshift(contents(page));
      if (!page.hasEarlier) break;
      expect(page.messages).toHaveLength(4);
      query = `?limit=4&before=${page.messages[0]!.id}`;
    }
    expect(seen.map((p) => p.length)).toEqual([2, 4, 4, 4]);
    expect(seen.flat()).toEqual(contents(all));
    expect(seen.at(-1)).toEqual(['question 6', 'Echo: question 6', 'question 7', 'Echo: question 7']);
  });

  it('a page that holds the first message says nothing earlier remains; `before` alone answers everything before it', async () => {
    const { team, ws, threadId } = await longThread();
    const exact = (await t.request({ method: 'GET', url: url(ws.id, threadId, `?limit=${2 * TURNS}`), key: team.ownerKey })).json();
    expect(exact.messages).toHaveLength(2 * TURNS);
    expect(exact.hasEarlier).toBe(false);
    const last = exact.messages.at(-1).id as string;
    const before = (await t.request({ method: 'GET', url: url(ws.id, threadId, `?before=${last}`), key: team.ownerKey })).json();
    expect(contents(before)).toEqual(contents(exact).slice(0, -1));
    expect(before.hasEarlier).toBe(false);
    const first = exact.messages[0].id as string;
    const none = (await t.request({ method: 'GET', url: url(ws.id, threadId, `?before=${first}&limit=5`), key: team.ownerKey })).json();
    expect(none).toMatchObject({ messages: [], hasEarlier: false });
  });

  it('refuses bad paging input with 400 and a cursor from another thread with 404', async () => {
    const { team, ws, threadId } = await longThread();
    for (const q of ['?limit=0', '?limit=1001', '?limit=two', '?before=not-a-uuid', '?limit=1.5']) {
      expectProblem(await t.request({ method: 'GET', url: url(ws.id, threadId, q), key: team.ownerKey }), 400);
    }
    const other = (
      await t.request({ method: 'POST', url: `/api/v1/chat/${ws.id}/completions`, key: team.ownerKey, payload: { prompt: 'another thread' } })
    ).json();
    expectProblem(await t.request({ method: 'GET', url: url(ws.id, threadId, `?before=${other.messageId}`), key: team.ownerKey }), 404);
    expectProblem(await t.request({ method: 'GET', url: url(ws.id, threadId, '?before=00000000-0000-4000-8000-000000000000'), key: team.ownerKey }), 404);
  });

  it('nobody pages a thread they may not read: another team, or another member under per-user history', async () => {
    const { team, ws, threadId } = await longThread('USER');
    const cursor = (await t.request({ method: 'GET', url: url(ws.id, threadId, '?limit=1'), key: team.ownerKey })).json().messages[0].id as string;
    const member = await team.addUser('member');
    const stranger = await newTeam(t);
    for (const key of [member.key, stranger.ownerKey]) {
      expectProblem(await t.request({ method: 'GET', url: url(ws.id, threadId, '?limit=2'), key }), 404);
      expectProblem(await t.request({ method: 'GET', url: url(ws.id, threadId, `?limit=2&before=${cursor}`), key }), 404);
    }
  });
});
