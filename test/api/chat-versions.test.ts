/** Versions: `regenerate` and `editOf` on both chat routes, the active path, switching versions, and who may. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectStatus, type paths, type Schemas } from '../helpers/api.js';
import { expectProblem, newTeam, startTestApp, type TeamFixture, type TestApp } from '../helpers/app.js';
import { createModel, createWorkspace } from '../helpers/factories.js';
import { expectShape } from '../helpers/shape.js';
import { parseSse } from '../helpers/sse.js';
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

type Msg = { id: string; role: string; content: string; versions: { index: number; count: number } };

async function setup(ws: Record<string, unknown> = {}, team?: TeamFixture) {
  team ??= await newTeam(t);
  const model = await createModel(t, team.ownerKey, { name: 'Stand-in GPT', url: stand.standIn.openaiBaseUrl, contextWindow: 16000 });
  const w = await createWorkspace(t, team.ownerKey, { modelIds: [model.id], ...ws });
  return { team, ws: w };
}

type Completion = paths['/api/v1/chat/{workspaceId}/completions']['post']['requestBody']['content']['application/json'];

/** One turn on the plain route (stream: false) or the streamed one; answers the turn's ids. */
async function turn(key: string, workspaceId: string, body: Completion, stream = false) {
  const params = { path: { workspaceId } };
  if (!stream) {
    const res = await t.api(key).POST('/api/v1/chat/{workspaceId}/completions', { params, body });
    return { res, threadId: res.data?.threadId ?? '', messageId: res.data?.messageId ?? '' };
  }
  const res = await t.api(key).POST('/api/v1/chat/{workspaceId}/completions/stream', { params, body, parseAs: 'text' });
  if (res.response.status !== 200) return { res, threadId: '', messageId: '' };
  const events = parseSse(res.data as unknown as string);
  const start = events.find((e) => e.event === 'start')!.data as { threadId: string; messageId: string };
  expect(events.at(-1)!.event).toBe('done');
  return { res, ...start };
}

const path$ = (workspaceId: string, threadId: string) => ({ workspaceId, threadId });

async function thread(key: string, wsId: string, threadId: string) {
  const res = await t.api(key).GET('/api/v1/chat/{workspaceId}/history/{threadId}', { params: { path: path$(wsId, threadId) } });
  return expectShape(ChatThreadFull, expectStatus(res, 200)).messages as Msg[];
}

const activate$ = (key: string, wsId: string, threadId: string, messageId: string) =>
  t.api(key).POST('/api/v1/chat/{workspaceId}/history/{threadId}/active', { params: { path: path$(wsId, threadId) }, body: { messageId } });

const view = (ms: Msg[]) => ms.map((m) => `${m.role[0]}:${m.content} ${m.versions.index}/${m.versions.count}`);
/** The user texts the provider was sent for the last call (the prompt's history and question). */
const lastPromptTexts = () =>
  (stand.standIn.requests.at(-1)!.body.messages as Array<{ role: string; content: string }>).filter((m) => m.role !== 'system').map((m) => m.content);

describe.each([false, true])('versions (streamed: %s)', (stream) => {
  it('regenerates without storing the question again; both answers are versions; the next turn continues the newest', async () => {
    const { team, ws } = await setup();
    const k = team.ownerKey;
    const first = await turn(k, ws.id, { prompt: 'one' }, stream);
    stand.standIn.set({ reply: 'another answer' });
    const again = await turn(k, ws.id, { regenerate: first.messageId }, stream);
    expect(again.threadId).toBe(first.threadId);
    // the question asked again is the stored one, with nothing before it
    expect(lastPromptTexts()).toEqual(['one']);
    expect(view(await thread(k, ws.id, first.threadId))).toEqual(['u:one 1/1', 'a:another answer 2/2']);
    stand.standIn.reset();
    await turn(k, ws.id, { prompt: 'two', threadId: first.threadId }, stream);
    expect(lastPromptTexts()).toEqual(['one', 'another answer', 'two']);
    expect(view(await thread(k, ws.id, first.threadId))).toEqual(['u:one 1/1', 'a:another answer 2/2', 'u:two 1/1', 'a:Echo: two 1/1']);
  });

  it('edits a question as a sibling; the edit is answered from the history before it; switching back shows the old path', async () => {
    const { team, ws } = await setup();
    const k = team.ownerKey;
    const a = await turn(k, ws.id, { prompt: 'q1' }, stream);
    await turn(k, ws.id, { prompt: 'q2', threadId: a.threadId }, stream);
    const q2 = (await thread(k, ws.id, a.threadId))[2]!;
    await turn(k, ws.id, { prompt: 'q2 edited', editOf: q2.id }, stream);
    expect(lastPromptTexts()).toEqual(['q1', 'Echo: q1', 'q2 edited']);
    expect(view(await thread(k, ws.id, a.threadId))).toEqual(['u:q1 1/1', 'a:Echo: q1 1/1', 'u:q2 edited 2/2', 'a:Echo: q2 edited 1/1']);
    // back to the first version: its answer comes with it
    const res = expectStatus(await activate$(k, ws.id, a.threadId, q2.id), 200);
    expect(view(expectShape(ChatThreadFull, res).messages as Msg[])).toEqual(['u:q1 1/1', 'a:Echo: q1 1/1', 'u:q2 1/2', 'a:Echo: q2 1/1']);
    // the thread continues from the version shown
    await turn(k, ws.id, { prompt: 'q3', threadId: a.threadId }, stream);
    expect(lastPromptTexts()).toEqual(['q1', 'Echo: q1', 'q2', 'Echo: q2', 'q3']);
    expect(view(await thread(k, ws.id, a.threadId)).slice(2)).toEqual(['u:q2 1/2', 'a:Echo: q2 1/1', 'u:q3 1/1', 'a:Echo: q3 1/1']);
  });
});

describe('versions: follow-ups at the same time', () => {
  it('two plain follow-ups sent together are both answered from the same history and kept as versions; the one stored last is shown', async () => {
    const { team, ws } = await setup();
    const k = team.ownerKey;
    const first = await turn(k, ws.id, { prompt: 'one' });
    stand.standIn.set({ delayMs: 200 });
    const [x, y] = await Promise.all([turn(k, ws.id, { prompt: 'x', threadId: first.threadId }), turn(k, ws.id, { prompt: 'y', threadId: first.threadId })]);
    expect([x.res.response.status, y.res.response.status]).toEqual([200, 200]);
    // each was asked what the thread held when it was sent: neither saw the other's question
    const prompts = stand.standIn.requests.slice(-2).map((r) => (r.body.messages as Array<{ content: string }>).map((m) => m.content));
    expect(prompts.sort()).toEqual([
      ['one', 'Echo: one', 'x'],
      ['one', 'Echo: one', 'y'],
    ]);
    const shown = view(await thread(k, ws.id, first.threadId));
    const last = shown[2] === 'u:x 2/2' ? 'x' : 'y';
    expect(shown).toEqual(['u:one 1/1', 'a:Echo: one 1/1', `u:${last} 2/2`, `a:Echo: ${last} 1/1`]);
    // the other is the question's first version, with its answer
    const other = last === 'x' ? y : x;
    const res = expectStatus(await activate$(k, ws.id, first.threadId, other.messageId), 200);
    const q = last === 'x' ? 'y' : 'x';
    expect(view(expectShape(ChatThreadFull, res).messages as Msg[])).toEqual(['u:one 1/1', 'a:Echo: one 1/1', `u:${q} 1/2`, `a:Echo: ${q} 1/1`]);
  });
});

describe('versions: messageCount', () => {
  it('counts the messages of the active path, in the list and on the thread, whichever version is shown', async () => {
    const { team, ws } = await setup();
    const k = team.ownerKey;
    const a = await turn(k, ws.id, { prompt: 'q1' });
    await turn(k, ws.id, { prompt: 'q2', threadId: a.threadId });
    const q2 = (await thread(k, ws.id, a.threadId))[2]!;
    // an edit and two regenerations: 4 + 2 + 2 = 8 messages stored, 4 on the path
    const edited = await turn(k, ws.id, { prompt: 'q2 edited', editOf: q2.id });
    await turn(k, ws.id, { regenerate: edited.messageId });
    await turn(k, ws.id, { regenerate: edited.messageId });
    const count = async () => {
      const list = expectStatus(await t.api(k).GET('/api/v1/chat/{workspaceId}/history', { params: { path: { workspaceId: ws.id } } }), 200);
      const full = expectStatus(await t.api(k).GET('/api/v1/chat/{workspaceId}/history/{threadId}', { params: { path: path$(ws.id, a.threadId) } }), 200);
      const listed = list.find((x) => x.id === a.threadId)!.messageCount;
      expect(full.messageCount).toBe(full.messages.length);
      expect(listed).toBe(full.messageCount);
      return listed;
    };
    expect(await count()).toBe(4);
    // back to the first answer alone: a shorter path
    const first = await activate$(k, ws.id, a.threadId, a.messageId);
    expect(first.response.status).toBe(200);
    expect(await count()).toBe(4);
    await turn(k, ws.id, { prompt: 'q3', threadId: a.threadId });
    expect(await count()).toBe(6);
  });
});

describe('versions three deep', () => {
  it('branches at three levels, switches between them, and continues from an older version', async () => {
    const { team, ws } = await setup();
    const k = team.ownerKey;
    const a = await turn(k, ws.id, { prompt: 'A' });
    // level 1: the first question, edited
    const qA = (await thread(k, ws.id, a.threadId))[0]!;
    await turn(k, ws.id, { prompt: 'A2', editOf: qA.id });
    const firstB = (await turn(k, ws.id, { prompt: 'B', threadId: a.threadId })).messageId;
    // level 2: the second answer, regenerated twice
    let ms = await thread(k, ws.id, a.threadId);
    stand.standIn.set({ reply: 'B answer 2' });
    await turn(k, ws.id, { regenerate: ms[3]!.id });
    stand.standIn.set({ reply: 'B answer 3' });
    await turn(k, ws.id, { regenerate: ms[3]!.id });
    stand.standIn.reset();
    await turn(k, ws.id, { prompt: 'C', threadId: a.threadId });
    // level 3: the third question, edited
    ms = await thread(k, ws.id, a.threadId);
    await turn(k, ws.id, { prompt: 'C2', editOf: ms[4]!.id });
    ms = await thread(k, ws.id, a.threadId);
    expect(view(ms)).toEqual(['u:A2 2/2', 'a:Echo: A2 1/1', 'u:B 1/1', 'a:B answer 3 3/3', 'u:C2 2/2', 'a:Echo: C2 1/1']);
    expect(ms).toHaveLength(6);

    const activate = async (messageId: string) => {
      return view(expectStatus(await activate$(k, ws.id, a.threadId, messageId), 200).messages as Msg[]);
    };
    // the export follows the active path too
    const all = await t.api(k).GET('/api/v1/chat/{workspaceId}/history/{threadId}/export', {
      params: { path: path$(ws.id, a.threadId), query: { format: 'json' } },
    });
    expect((expectStatus(all, 200) as Schemas['ChatThreadExport']).messages.map((m) => m.id)).toEqual(ms.map((m) => m.id));
    // the answer's versions, oldest first; another thread's message is not one of them
    const versions = (key: string, messageId: string) =>
      t.api(key).GET('/api/v1/chat/{workspaceId}/history/{threadId}/versions/{messageId}', {
        params: { path: { ...path$(ws.id, a.threadId), messageId } },
      });
    const vs = expectStatus(await versions(k, ms[3]!.id), 200);
    expect(vs.map((v) => v.id)).toEqual([firstB, expect.any(String), ms[3]!.id]);
    const elsewhere = await turn(k, ws.id, { prompt: 'elsewhere' });
    expectProblem(await versions(k, elsewhere.messageId), 404);
    const stranger = await newTeam(t);
    expectProblem(await versions(stranger.ownerKey, ms[3]!.id), 404);
    // the first version of the middle answer: the path below it is its own (none)
    expect(await activate(firstB)).toEqual(['u:A2 2/2', 'a:Echo: A2 1/1', 'u:B 1/1', 'a:Echo: B 1/3']);
    // back to the newest version: its subtree, with the last edit, comes back
    expect(await activate(ms[3]!.id)).toEqual(view(ms));
    // the first question's first version: its own short path
    expect(await activate(qA.id)).toEqual(['u:A 1/2', 'a:Echo: A 1/1']);
    // continuing from an older version branches there
    await turn(k, ws.id, { prompt: 'D', threadId: a.threadId });
    expect(lastPromptTexts()).toEqual(['A', 'Echo: A', 'D']);
    expect(view(await thread(k, ws.id, a.threadId))).toEqual(['u:A 1/2', 'a:Echo: A 1/1', 'u:D 1/1', 'a:Echo: D 1/1']);
    // paging walks the active path
    const paged = (query: { limit: number; before?: string }) =>
      t.api(k).GET('/api/v1/chat/{workspaceId}/history/{threadId}', { params: { path: path$(ws.id, a.threadId), query } });
    const page = expectStatus(await paged({ limit: 2 }), 200);
    expect(view(page.messages as Msg[])).toEqual(['u:D 1/1', 'a:Echo: D 1/1']);
    expect(page.hasEarlier).toBe(true);
    const before = expectStatus(await paged({ limit: 5, before: page.messages[0]!.id }), 200);
    expect(view(before.messages as Msg[])).toEqual(['u:A 1/2', 'a:Echo: A 1/1']);
    expect(before.hasEarlier).toBe(false);
    // a message of another path is no cursor
    expectProblem(await paged({ limit: 5, before: ms[5]!.id }), 404);
  });

  it('retries a failed answer as a regenerate: one question, the failure kept as a version', async () => {
    const { team, ws } = await setup();
    const k = team.ownerKey;
    stand.standIn.set({ failStatus: 500 });
    expectProblem((await turn(k, ws.id, { prompt: 'fails once' })).res, 502);
    const threads = expectStatus(await t.api(k).GET('/api/v1/chat/{workspaceId}/history', { params: { path: { workspaceId: ws.id } } }), 200);
    const threadId = threads[0]!.id;
    const [, answer] = await thread(k, ws.id, threadId);
    stand.standIn.reset();
    await turn(k, ws.id, { regenerate: answer!.id });
    expect(view(await thread(k, ws.id, threadId))).toEqual(['u:fails once 1/1', 'a:Echo: fails once 2/2']);
  });
});

describe('versions: who may', () => {
  it('is refused (404) to another team and to a member who cannot read the thread, and checks what it names', async () => {
    const { team, ws } = await setup({ chatHistoryType: 'USER' });
    const k = team.ownerKey;
    const a = await turn(k, ws.id, { prompt: 'mine' });
    const [q, ans] = await thread(k, ws.id, a.threadId);
    const member = await team.addUser('member');
    const other = await setup();
    const active = (key: string, wsId: string, messageId: string) => activate$(key, wsId, a.threadId, messageId);
    // another team, with its own workspace or this one
    expectProblem(await active(other.team.ownerKey, ws.id, q!.id), 404);
    expectProblem(await active(other.team.ownerKey, other.ws.id, q!.id), 404);
    // a member of a per-user history reads only their own threads
    expectProblem(await active(member.key, ws.id, q!.id), 404);
    expectProblem(await turn(member.key, ws.id, { regenerate: ans!.id }).then((r) => r.res), 404);
    // a follow-up to it, plain (its thread read before the call) or streamed (statement 1)
    expectProblem(await turn(member.key, ws.id, { prompt: 'x', threadId: a.threadId }).then((r) => r.res), 404);
    expectProblem(await turn(member.key, ws.id, { prompt: 'x', threadId: a.threadId }, true).then((r) => r.res), 404);
    expectProblem(await turn(other.team.ownerKey, ws.id, { prompt: 'x', threadId: a.threadId }).then((r) => r.res), 404);
    expectProblem(await turn(member.key, ws.id, { prompt: 'x', editOf: q!.id }).then((r) => r.res), 404);
    expectProblem(await turn(other.team.ownerKey, other.ws.id, { regenerate: ans!.id }).then((r) => r.res), 404);
    // a message of another thread
    const b = await turn(k, ws.id, { prompt: 'other thread' });
    expectProblem(await active(k, ws.id, b.messageId), 404);
    expectProblem(await turn(k, ws.id, { regenerate: ans!.id, threadId: b.threadId }).then((r) => r.res), 404);
    // bad requests store nothing
    expectProblem(await turn(k, ws.id, { regenerate: q!.id }).then((r) => r.res), 400);
    expectProblem(await turn(k, ws.id, { prompt: 'x', editOf: ans!.id }).then((r) => r.res), 400);
    expectProblem(await turn(k, ws.id, { prompt: 'x', regenerate: ans!.id }).then((r) => r.res), 400);
    expectProblem(await turn(k, ws.id, { prompt: 'x', regenerate: ans!.id, editOf: q!.id }).then((r) => r.res), 400);
    expectProblem(await turn(k, ws.id, { editOf: q!.id }).then((r) => r.res), 400);
    expect(view(await thread(k, ws.id, a.threadId))).toEqual(['u:mine 1/1', 'a:Echo: mine 1/1']);
    // and the one who started it follows it up
    expect((await turn(k, ws.id, { prompt: 'again', threadId: a.threadId })).res.response.status).toBe(200);
    expect(view(await thread(k, ws.id, a.threadId))).toEqual(['u:mine 1/1', 'a:Echo: mine 1/1', 'u:again 1/1', 'a:Echo: again 1/1']);
  });
});
