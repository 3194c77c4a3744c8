/** The prompt library: team and personal prompts, their variables, and who sees and changes which. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, newTeam, startTestApp, type TestApp } from '../helpers/app.js';
import { expectShape } from '../helpers/shape.js';
import { SavedPrompt } from '../../src/modules/chat/schema.js';
import { variablesOf } from '../../src/modules/chat/saved-prompts.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const create = (key: string, payload: Record<string, unknown>) => t.request({ method: 'POST', url: '/api/v1/prompts', key, payload });
const list = async (key: string) => (await t.request({ method: 'GET', url: '/api/v1/prompts', key })).json() as Array<{ id: string; title: string }>;

describe('prompt library', () => {
  it('names a prompt\u2019s variables in order of first use', () => {
    expect(variablesOf('Translate {{text}} into {{ language }}; keep {{text}} short. {{}} {{ }} {x}')).toEqual(['text', 'language']);
  });

  it('shows team prompts to the team and personal ones to their creator only; owners/admins write team prompts', async () => {
    const team = await newTeam(t);
    const member = await team.addUser('member');
    const other = await newTeam(t);
    const made = await create(team.ownerKey, { title: 'Summarise', content: 'Summarise {{text}} for {{audience}}.', scope: 'team' });
    expect(made.statusCode).toBe(201);
    const p = expectShape(SavedPrompt, made.json());
    expect(p).toMatchObject({ scope: 'team', variables: ['text', 'audience'] });
    const mine = expectShape(SavedPrompt, (await create(member.key, { title: ' Mine ', content: 'Just me' })).json());
    expect(mine).toMatchObject({ scope: 'personal', title: 'Mine', variables: [] });
    expectProblem(await create(member.key, { title: 'Team', content: 'x', scope: 'team' }), 403);

    expect((await list(member.key)).map((x) => x.title)).toEqual(['Summarise', 'Mine']);
    expect((await list(team.ownerKey)).map((x) => x.title)).toEqual(['Summarise']);
    expect(await list(other.ownerKey)).toEqual([]);

    // changing: a member their own, not the team's; nobody another's personal prompt (404, as if missing)
    const patch = (key: string, id: string, payload: Record<string, unknown>) => t.request({ method: 'PATCH', url: `/api/v1/prompts/${id}`, key, payload });
    expectProblem(await patch(member.key, p.id, { title: 'Mine now' }), 403);
    expectProblem(await patch(team.ownerKey, mine.id, { title: 'Taken' }), 404);
    expectProblem(await patch(other.ownerKey, p.id, { title: 'Taken' }), 404);
    expect((await patch(member.key, mine.id, { content: 'Just {{me}}' })).json()).toMatchObject({ title: 'Mine', variables: ['me'] });
    expect((await patch(team.ownerKey, p.id, { title: 'Summary' })).json()).toMatchObject({ title: 'Summary' });
    const del = (key: string, id: string) => t.request({ method: 'DELETE', url: `/api/v1/prompts/${id}`, key });
    expectProblem(await del(member.key, p.id), 403);
    expectProblem(await del(other.ownerKey, mine.id), 404);
    expect((await del(member.key, mine.id)).statusCode).toBe(200);
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
      expectProblem(await create(team.ownerKey, payload), 400);
    expect(await list(team.ownerKey)).toEqual([]);
  });
});
