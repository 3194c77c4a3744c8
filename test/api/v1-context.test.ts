/**
 * What /v1 shares with /api/v1/chat — threads (`atrium.store`, `atrium.threadId`), the
 * visibility rules of teams and workspaces, and a workspace's own Plus entries (`Workspace.plusIds`) on
 * both chat paths.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Workspace } from '../../src/modules/workspaces/schema.js';
import { expectProblem, startTestApp, storedMessageCount, type TestApp } from '../helpers/app.js';
import { createWorkspace } from '../helpers/factories.js';
import { expectStatus, type paths, type Schemas } from '../helpers/api.js';
import { expectShape } from '../helpers/shape.js';
import { useStandIn } from '../support/use-standin.js';
import { createPlus, logsOf, sdk, threadsOf, v1Setup } from './v1-helpers.js';

const s = useStandIn();
let t: TestApp;
let baseUrl: string;

beforeAll(async () => {
  t = await startTestApp();
  baseUrl = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await t.close();
});

type ChatBody = paths['/v1/chat/completions']['post']['requestBody']['content']['application/json'];
type Completion = Schemas['OpenAIChatCompletion'] & Partial<Schemas['OpenAIError']>;

/** A /v1 chat completion: its status, and the completion or the OpenAI-style error. */
async function chat(key: string, body: ChatBody): Promise<{ status: number; json: Completion }> {
  const res = await t.api(key).POST('/v1/chat/completions', { body });
  return { status: res.response.status, json: (res.data ?? res.error) as Completion };
}
const user = (content: string) => [{ role: 'user', content }];
const ask = (key: string, workspaceId: string, body: { prompt: string; threadId?: string }) =>
  t.api(key).POST('/api/v1/chat/{workspaceId}/completions', { params: { path: { workspaceId } }, body });
const workspace = (key: string, workspaceId: string) => t.api(key).GET('/api/v1/workspaces/{workspaceId}', { params: { path: { workspaceId } } });
const patchWorkspace = (key: string, workspaceId: string, plusIds: string[]) =>
  t.api(key).PATCH('/api/v1/workspaces/{workspaceId}', { params: { path: { workspaceId } }, body: { plusIds } });

describe('threads', () => {
  it('keeps no thread by default; atrium.store keeps one, and atrium.threadId continues it', async () => {
    const { team, ws } = await v1Setup(t, s);
    const model = `workspace/${ws.id}`;
    expect((await chat(team.ownerKey, { model, messages: user('not kept') })).status).toBe(200);
    expect(await threadsOf(t, team.ownerKey, ws.id)).toEqual([]);

    const first = await chat(team.ownerKey, { model, messages: user('kept first'), atrium: { store: true } });
    expect(first.status).toBe(200);
    const threadId = first.json.atrium.threadId!;
    expect(threadId).toMatch(/^[0-9a-f-]{36}$/);
    const second = await chat(team.ownerKey, { model, messages: user('kept second'), atrium: { threadId } });
    expect(second.status).toBe(200);
    expect(second.json.atrium.threadId).toBe(threadId);
    // the thread's history reached the provider: the client sent only the new turn
    const sent = s.standIn.requests.at(-1)!.body.messages.map((m: { content: string }) => m.content);
    expect(sent).toEqual(['kept first', 'Echo: kept first', 'kept second']);

    expect(await threadsOf(t, team.ownerKey, ws.id)).toEqual([expect.objectContaining({ id: threadId, messageCount: 4 })]);
    const full = expectStatus(
      await t.api(team.ownerKey).GET('/api/v1/chat/{workspaceId}/history/{threadId}', { params: { path: { workspaceId: ws.id, threadId } } }),
      200,
    );
    expect(full.messages.at(-1)).toMatchObject({ id: second.json.atrium.messageId, role: 'assistant', content: 'Echo: kept second' });
    const logs = await logsOf(t, team.ownerKey);
    expect(logs.map((l) => [l.prompt, l.threadId])).toEqual([
      ['kept second', threadId],
      ['kept first', threadId],
      ['not kept', null],
    ]);
  });

  it('streams into a kept thread too, and refuses store:false with a threadId', async () => {
    const { team, ws } = await v1Setup(t, s);
    // The Atrium extension rides along as an extra body field (not in OpenAI's types).
    const body: OpenAI.Chat.ChatCompletionCreateParamsStreaming & { atrium: { store: boolean } } = {
      model: `workspace/${ws.id}`,
      messages: [{ role: 'user', content: 'streamed and kept' }],
      stream: true,
      atrium: { store: true },
    };
    const stream = await sdk(baseUrl, team.ownerKey).chat.completions.create(body);
    const chunks: Array<OpenAI.Chat.ChatCompletionChunk & { atrium?: { threadId: string } }> = [];
    for await (const c of stream) chunks.push(c);
    const threadId = chunks[0]!.atrium!.threadId;
    expect(await threadsOf(t, team.ownerKey, ws.id)).toEqual([expect.objectContaining({ id: threadId, messageCount: 2 })]);
    const bad = await chat(team.ownerKey, { model: `workspace/${ws.id}`, messages: user('x'), atrium: { store: false, threadId } });
    expect(bad.status).toBe(400);
    expect(bad.json.error).toMatchObject({ type: 'invalid_request_error', param: 'atrium.store' });
  });

  it('stores concurrent ephemeral turns and thread follow-ups correctly when they share a group commit', async () => {
    const { team, ws } = await v1Setup(t, s);
    const threadId = expectStatus(await ask(team.ownerKey, ws.id, { prompt: 'opening' }), 200).threadId;
    const results = await Promise.all([
      ...[1, 2, 3].map(async (i) => (await chat(team.ownerKey, { model: `workspace/${ws.id}`, messages: user(`ephemeral ${i}`) })).status),
      ...[1, 2, 3].map(async (i) => (await ask(team.ownerKey, ws.id, { prompt: `follow ${i}`, threadId })).response.status),
    ]);
    expect(results).toEqual([200, 200, 200, 200, 200, 200]);
    // the three follow-ups are all stored, as branches of the opening answer (a thread counts its active path)
    expect(await threadsOf(t, team.ownerKey, ws.id)).toEqual([expect.objectContaining({ id: threadId })]);
    expect(await storedMessageCount(t, threadId)).toBe(8);
    const logs = await logsOf(t, team.ownerKey);
    expect(logs.filter((l) => l.prompt.startsWith('ephemeral')).map((l) => [l.threadId, l.status])).toEqual([
      [null, 'ok'],
      [null, 'ok'],
      [null, 'ok'],
    ]);
    expect(logs.filter((l) => l.prompt.startsWith('follow')).every((l) => l.threadId === threadId && l.status === 'ok')).toBe(true);
  });

  it('answers a thread the caller cannot see (USER history of another member) with 404', async () => {
    const { team, ws } = await v1Setup(t, s, { chatHistoryType: 'USER' });
    const member = await team.addUser('member');
    const mine = await chat(team.ownerKey, { model: `workspace/${ws.id}`, messages: user('owner thread'), atrium: { store: true } });
    const theirs = await chat(member.key, { model: `workspace/${ws.id}`, messages: user('crossing'), atrium: { threadId: mine.json.atrium.threadId! } });
    expect(theirs.status).toBe(404);
    expect(theirs.json.error).toMatchObject({ type: 'invalid_request_error', code: 'not_found' });
    expect(await threadsOf(t, team.ownerKey, ws.id)).toEqual([expect.objectContaining({ messageCount: 2 })]);
  });
});

describe('visibility', () => {
  it('a private workspace is model_not_found to another member of the team, and usable by its creator', async () => {
    const { team, model } = await v1Setup(t, s);
    const member = await team.addUser('member');
    const priv = await createWorkspace(t, team.ownerKey, { modelIds: [model.id], sharingType: 'PRIVATE' });
    const denied = await chat(member.key, { model: `workspace/${priv.id}`, messages: user('peek') });
    expect(denied.status).toBe(404);
    expect(denied.json.error).toMatchObject({ code: 'model_not_found', param: 'model' });
    expect(await logsOf(t, member.key)).toEqual([]);
    expect((await chat(team.ownerKey, { model: `workspace/${priv.id}/${model.id}`, messages: user('mine') })).status).toBe(200);
  });

  it('another team\u2019s workspace is model_not_found', async () => {
    const a = await v1Setup(t, s);
    const b = await v1Setup(t, s);
    const r = await chat(b.team.ownerKey, { model: `workspace/${a.ws.id}`, messages: user('cross team') });
    expect(r.status).toBe(404);
    expect(r.json.error!.code).toBe('model_not_found');
  });

  it('a Plus entry of another team in atrium.plusIds is 404 and nothing is logged', async () => {
    const a = await v1Setup(t, s);
    const b = await v1Setup(t, s);
    const foreign = await createPlus(t, a.team.ownerKey, { title: 'A', isPublic: 'true' }, 'Invoices are due in thirty days.');
    const r = await chat(b.team.ownerKey, { model: `workspace/${b.ws.id}`, messages: user('invoices'), atrium: { plusIds: [foreign.id] } });
    expect(r.status).toBe(404);
    expect(await logsOf(t, b.team.ownerKey)).toEqual([]);
  });
});

describe('workspace plusIds', () => {
  const TEXT = 'Invoices are payable within thirty days of receipt. Late invoices accrue interest of two percent.';

  it('are set on create and update, shown on read, and must be entries the setter can see', async () => {
    const { team, model } = await v1Setup(t, s);
    const member = await team.addUser('member');
    const pub = await createPlus(t, team.ownerKey, { title: 'Public', isPublic: 'true' }, TEXT);
    const ownersPrivate = await createPlus(t, team.ownerKey, { title: 'Private', isPublic: 'false' }, TEXT);
    const other = await v1Setup(t, s);
    const foreign = await createPlus(t, other.team.ownerKey, { title: 'Foreign', isPublic: 'true' }, TEXT);

    const ws = await createWorkspace(t, member.key, { modelIds: [model.id], plusIds: [pub.id] });
    expect(ws.plusIds).toEqual([pub.id]);
    const read = await workspace(member.key, ws.id);
    expect(expectShape(Workspace, read.data).plusIds).toEqual([pub.id]);

    for (const bad of [[ownersPrivate.id], [foreign.id], [crypto.randomUUID()]]) {
      const p = expectProblem(await patchWorkspace(member.key, ws.id, [pub.id, ...bad]), 400);
      expect(p).toMatchObject({ code: 'unknown_plus_entry', errors: [{ path: 'body/plusIds/1' }] });
      expectProblem(await t.api(member.key).POST('/api/v1/workspaces', { body: { name: 'x', plusIds: bad } }), 400);
    }
    // unchanged after the refusals
    expect((await workspace(member.key, ws.id)).data!.plusIds).toEqual([pub.id]);
    const patched = expectStatus(await patchWorkspace(team.ownerKey, ws.id, [ownersPrivate.id, pub.id]), 200);
    expect(patched.plusIds).toEqual([ownersPrivate.id, pub.id]);
    // a deleted entry leaves the workspace
    expect((await t.api(team.ownerKey).DELETE('/api/v1/plus/{plusId}', { params: { path: { plusId: pub.id } } })).response.status).toBe(200);
    expect((await workspace(team.ownerKey, ws.id)).data!.plusIds).toEqual([ownersPrivate.id]);
  });

  it('supply context on /v1 (plain and streamed) and on /api/v1/chat, without the request naming them', async () => {
    const { team, model } = await v1Setup(t, s);
    const entry = await createPlus(t, team.ownerKey, { title: 'Billing', isPublic: 'true' }, TEXT);
    const ws = await createWorkspace(t, team.ownerKey, { modelIds: [model.id], plusIds: [entry.id] });
    const question = 'When are invoices payable?';

    const plain = await chat(team.ownerKey, { model: `workspace/${ws.id}`, messages: user(question) });
    expect(plain.status).toBe(200);
    expect(plain.json.atrium_sources!.length).toBeGreaterThan(0);
    expect(plain.json.atrium_sources![0]).toMatchObject({ plusId: entry.id });
    expect(plain.json.atrium_sources![0]!.excerpt).toContain('thirty days');
    expect(JSON.stringify(s.standIn.requests.at(-1)!.body.messages[0])).toContain('thirty days');

    const stream = await sdk(baseUrl, team.ownerKey).chat.completions.create({
      model: `workspace/${ws.id}`,
      messages: [{ role: 'user', content: question }],
      stream: true,
    });
    const chunks: Array<OpenAI.Chat.ChatCompletionChunk & { atrium_sources?: Array<{ plusId: string }> }> = [];
    for await (const c of stream) chunks.push(c);
    expect(chunks[0]!.atrium_sources![0]!.plusId).toBe(entry.id);
    expect(chunks.slice(1).every((c) => c.atrium_sources === undefined)).toBe(true);

    const api = expectStatus(await ask(team.ownerKey, ws.id, { prompt: question }), 200);
    expect(api.sources[0]).toMatchObject({ plusId: entry.id });

    // without the workspace's entries there is no context
    const bare = await createWorkspace(t, team.ownerKey, { modelIds: [model.id] });
    const none = await chat(team.ownerKey, { model: `workspace/${bare.id}`, messages: user(question) });
    expect(none.json.atrium_sources).toBeUndefined();
  });

  it('skip an entry the caller cannot see: a member gets no context from the owner\u2019s private entry', async () => {
    const { team, model } = await v1Setup(t, s);
    const member = await team.addUser('member');
    const secret = await createPlus(t, team.ownerKey, { title: 'Secret', isPublic: 'false' }, TEXT);
    const ws = await createWorkspace(t, team.ownerKey, { modelIds: [model.id], plusIds: [secret.id] });
    const question = 'When are invoices payable?';

    const owner = await chat(team.ownerKey, { model: `workspace/${ws.id}`, messages: user(question) });
    expect(owner.json.atrium_sources![0]!.plusId).toBe(secret.id);

    const asMember = await chat(member.key, { model: `workspace/${ws.id}`, messages: user(question) });
    expect(asMember.status).toBe(200);
    expect(asMember.json.atrium_sources).toBeUndefined();
    expect(JSON.stringify(s.standIn.requests.at(-1)!.body)).not.toContain('thirty days');
    const api = await ask(member.key, ws.id, { prompt: question });
    expect(api.data!.sources).toEqual([]);
    // nor its id: the workspace shows the member only the entries they can see
    expect((await workspace(member.key, ws.id)).data!.plusIds).toEqual([]);
    const listed = expectStatus(await t.api(member.key).GET('/api/v1/workspaces'), 200);
    expect(listed.find((w) => w.id === ws.id)!.plusIds).toEqual([]);
    expect((await workspace(team.ownerKey, ws.id)).data!.plusIds).toEqual([secret.id]);
  });

  it('a setter replaces only the entries they can see: another user\u2019s private entry stays', async () => {
    const { team, model } = await v1Setup(t, s);
    const admin = await team.addUser('admin');
    const member = await team.addUser('member');
    const secret = await createPlus(t, admin.key, { title: 'Admin notes', isPublic: 'false' }, TEXT);
    const pub = await createPlus(t, member.key, { title: 'Shared', isPublic: 'true' }, TEXT);
    const ws = await createWorkspace(t, member.key, { modelIds: [model.id] });
    const byAdmin = await patchWorkspace(admin.key, ws.id, [secret.id]);
    expect(byAdmin.data!.plusIds).toEqual([secret.id]);
    const byMember = expectStatus(await patchWorkspace(member.key, ws.id, [pub.id]), 200);
    expect(byMember.plusIds).toEqual([pub.id]);
    expect((await workspace(admin.key, ws.id)).data!.plusIds).toEqual([pub.id, secret.id]);
  });
});
