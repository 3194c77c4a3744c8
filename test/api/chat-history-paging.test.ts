/** Paging back through a long thread: `limit` and the `before` cursor of GET …/history/{threadId}. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectStatus } from '../helpers/api.js';
import { expectProblem, newTeam, startTestApp, type TestApp } from '../helpers/app.js';
import { createModel, createWorkspace } from '../helpers/factories.js';
import { expectShape } from '../helpers/shape.js';
import { ChatThreadFull } from '../../src/modules/chat/schema.js';
import { useStandIn } from '../support/use-standin.js';

let t: TestApp;
const stand = useStandIn();

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t.close();
});

const TURNS = 7;

/** A workspace whose thread has TURNS turns (2 × TURNS messages: "question i" / "Echo: question i"). */
async function longThread(history: 'TEAM' | 'USER' = 'TEAM') {
  const team = await newTeam(t);
  const m = await createModel(t, team.ownerKey, { url: stand.standIn.openaiBaseUrl, baseModel: 'gpt-test', apiKey: 'sk-test' });
  const ws = await createWorkspace(t, team.ownerKey, { modelIds: [m.id], chatHistoryType: history });
  let threadId: string | undefined;
  for (let i = 1; i <= TURNS; i++) {
    const res = await t.api(team.ownerKey).POST('/api/v1/chat/{workspaceId}/completions', {
      params: { path: { workspaceId: ws.id } },
      body: { prompt: `question ${i}`, ...(threadId ? { threadId } : {}) },
    });
    threadId = expectStatus(res, 200).threadId;
  }
  return { team, ws, threadId: threadId! };
}

/** GET …/history/{threadId} with its paging query. */
const get = (key: string, workspaceId: string, threadId: string, query: { limit?: number; before?: string } = {}) =>
  t.api(key).GET('/api/v1/chat/{workspaceId}/history/{threadId}', { params: { path: { workspaceId, threadId }, query } });
const contents = (page: { messages: Array<{ content: string }> }) => page.messages.map((m) => m.content);

describe('thread history paging', () => {
  it('pages back from the newest message to the first, each page oldest first, without gaps or repeats', async () => {
    const { team, ws, threadId } = await longThread();
    const all = expectShape(ChatThreadFull, (await get(team.ownerKey, ws.id, threadId)).data);
    expect(all.messages).toHaveLength(2 * TURNS);
    expect(all.hasEarlier).toBeUndefined();

    const seen: string[][] = [];
    let query: { limit: number; before?: string } = { limit: 4 };
    for (;;) {
      const page = expectShape(ChatThreadFull, expectStatus(await get(team.ownerKey, ws.id, threadId, query), 200));
      expect(page.messageCount).toBe(2 * TURNS);
      seen.unshift(contents(page));
      if (!page.hasEarlier) break;
      expect(page.messages).toHaveLength(4);
      query = { limit: 4, before: page.messages[0]!.id };
    }
    expect(seen.map((p) => p.length)).toEqual([2, 4, 4, 4]);
    expect(seen.flat()).toEqual(contents(all));
    expect(seen.at(-1)).toEqual(['question 6', 'Echo: question 6', 'question 7', 'Echo: question 7']);
  });

  it('a page that holds the first message says nothing earlier remains; `before` alone answers everything before it', async () => {
    const { team, ws, threadId } = await longThread();
    const exact = expectStatus(await get(team.ownerKey, ws.id, threadId, { limit: 2 * TURNS }), 200);
    expect(exact.messages).toHaveLength(2 * TURNS);
    expect(exact.hasEarlier).toBe(false);
    const last = exact.messages.at(-1)!.id;
    const before = expectStatus(await get(team.ownerKey, ws.id, threadId, { before: last }), 200);
    expect(contents(before)).toEqual(contents(exact).slice(0, -1));
    expect(before.hasEarlier).toBe(false);
    const first = exact.messages[0]!.id;
    const none = (await get(team.ownerKey, ws.id, threadId, { before: first, limit: 5 })).data;
    expect(none).toMatchObject({ messages: [], hasEarlier: false });
  });

  it('refuses bad paging input with 400 and a cursor from another thread with 404', async () => {
    const { team, ws, threadId } = await longThread();
    for (const q of [{ limit: 0 }, { limit: 1001 }, { before: 'not-a-uuid' }, { limit: 1.5 }]) {
      expectProblem(await get(team.ownerKey, ws.id, threadId, q), 400);
    }
    // raw: a limit that is not a number
    expectProblem(await t.request({ method: 'GET', url: `/api/v1/chat/${ws.id}/history/${threadId}?limit=two`, key: team.ownerKey }), 400);
    const other = expectStatus(
      await t
        .api(team.ownerKey)
        .POST('/api/v1/chat/{workspaceId}/completions', { params: { path: { workspaceId: ws.id } }, body: { prompt: 'another thread' } }),
      200,
    );
    expectProblem(await get(team.ownerKey, ws.id, threadId, { before: other.messageId }), 404);
    expectProblem(await get(team.ownerKey, ws.id, threadId, { before: '00000000-0000-4000-8000-000000000000' }), 404);
  });

  it('nobody pages a thread they may not read: another team, or another member under per-user history', async () => {
    const { team, ws, threadId } = await longThread('USER');
    const cursor = expectStatus(await get(team.ownerKey, ws.id, threadId, { limit: 1 }), 200).messages[0]!.id;
    const member = await team.addUser('member');
    const stranger = await newTeam(t);
    for (const key of [member.key, stranger.ownerKey]) {
      expectProblem(await get(key, ws.id, threadId, { limit: 2 }), 404);
      expectProblem(await get(key, ws.id, threadId, { limit: 2, before: cursor }), 404);
    }
  });
});
