/** The prompt library: team and personal prompts, their variables, and who sees and changes which. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectStatus } from '../helpers/api.js';
import { expectProblem, newTeam, startTestApp, type TestApp } from '../helpers/app.js';
import { expectShape } from '../helpers/shape.js';
import { SavedPrompt } from '../../src/modules/chat/schema.js';
import { variablesOf } from '../../src/modules/chat/saved-prompts.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const create = (key: string, body: { title: string; content: string; scope?: 'team' | 'personal' }) => t.api(key).POST('/api/v1/prompts', { body });
const list = async (key: string) => expectStatus(await t.api(key).GET('/api/v1/prompts'), 200);

describe('prompt library', () => {
  it('names a prompt\u2019s variables in order of first use', () => {
    expect(variablesOf('Translate {{text}} into {{ language }}; keep {{text}} short. {{}} {{ }} {x}')).toEqual(['text', 'language']);
  });

  it('shows team prompts to the team and personal ones to their creator only; owners/admins write team prompts', async () => {
    const team = await newTeam(t);
    const member = await team.addUser('member');
    const other = await newTeam(t);
    const made = await create(team.ownerKey, { title: 'Summarise', content: 'Summarise {{text}} for {{audience}}.', scope: 'team' });
    expect(made.response.status).toBe(201);
    const p = expectShape(SavedPrompt, made.data);
    expect(p).toMatchObject({ scope: 'team', variables: ['text', 'audience'] });
    const mine = expectShape(SavedPrompt, (await create(member.key, { title: ' Mine ', content: 'Just me' })).data);
    expect(mine).toMatchObject({ scope: 'personal', title: 'Mine', variables: [] });
    expectProblem(await create(member.key, { title: 'Team', content: 'x', scope: 'team' }), 403);

    expect((await list(member.key)).map((x) => x.title)).toEqual(['Summarise', 'Mine']);
    expect((await list(team.ownerKey)).map((x) => x.title)).toEqual(['Summarise']);
    expect(await list(other.ownerKey)).toEqual([]);

    // changing: a member their own, not the team's; nobody another's personal prompt (404, as if missing)
    const patch = (key: string, promptId: string, body: { title?: string; content?: string }) =>
      t.api(key).PATCH('/api/v1/prompts/{promptId}', { params: { path: { promptId } }, body });
    expectProblem(await patch(member.key, p.id, { title: 'Mine now' }), 403);
    expectProblem(await patch(team.ownerKey, mine.id, { title: 'Taken' }), 404);
    expectProblem(await patch(other.ownerKey, p.id, { title: 'Taken' }), 404);
    expect((await patch(member.key, mine.id, { content: 'Just {{me}}' })).data).toMatchObject({ title: 'Mine', variables: ['me'] });
    expect((await patch(team.ownerKey, p.id, { title: 'Summary' })).data).toMatchObject({ title: 'Summary' });
    const del = (key: string, promptId: string) => t.api(key).DELETE('/api/v1/prompts/{promptId}', { params: { path: { promptId } } });
    expectProblem(await del(member.key, p.id), 403);
    expectProblem(await del(other.ownerKey, mine.id), 404);
    expect((await del(member.key, mine.id)).response.status).toBe(200);
    expect((await list(member.key)).map((x) => x.title)).toEqual(['Summary']);
  });

  it('refuses blank or oversized fields with 400, storing nothing', async () => {
    const team = await newTeam(t);
    for (const payload of [
      { title: ' ', content: 'x' },
      { title: 'x', content: '   ' },
      { title: 'x' },
      { title: 'x', content: 'y'.repeat(20_001) },
      { title: 'x', content: 'y', scope: 'all' },
    ])
      // raw: blank, missing, oversized and unknown values
      expectProblem(await t.request({ method: 'POST', url: '/api/v1/prompts', key: team.ownerKey, payload }), 400);
    expect(await list(team.ownerKey)).toEqual([]);
  });
});
