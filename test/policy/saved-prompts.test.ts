import { and, inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { savedPrompts } from '../../src/db/schema/chat.js';
import {
  changeableSavedPromptsSql,
  mayAddSavedPrompt,
  mayChangeSavedPrompt,
  mayReadSavedPrompt,
  readableSavedPromptsSql,
  type Principal,
  type PromptScope,
} from '../../src/policy/index.js';
import { checkRule, makeRows, startMatrix, table, type Matrix, type Row } from './matrix.js';

let m: Matrix;
let rows: Row[];
const facts = (r: Row) => ({ teamId: r.creator.teamId, userId: r.creator.userId, scope: r.flag as PromptScope });

beforeAll(async () => {
  m = await startMatrix();
  rows = await makeRows(m, ['team', 'personal'], async (creator, flag, id) => {
    await m.t.database.db
      .insert(savedPrompts)
      .values({ id, teamId: creator.teamId, userId: creator.userId, scope: flag as PromptScope, title: flag, content: 'c' });
  });
});
afterAll(() => m.t.close());

const selectWith = (where: (p: Principal) => ReturnType<typeof readableSavedPromptsSql>) => async (p: Principal, ids: string[]) =>
  (
    await m.t.database.db
      .select({ id: savedPrompts.id })
      .from(savedPrompts)
      .where(and(where(p), inArray(savedPrompts.id, ids)))
  ).map((r) => r.id);

describe('the prompt library (policy/saved-prompts.ts)', () => {
  it('a team prompt is read by every member; a personal one by its author only', async () => {
    const expected = table(`
      role    who      team  personal
      owner   creator  yes   yes
      owner   other    yes   no
      admin   creator  yes   yes
      admin   other    yes   no
      member  creator  yes   yes
      member  other    yes   no
    `);
    await checkRule(
      m,
      rows,
      expected,
      (p, r) => mayReadSavedPrompt(p, facts(r)),
      selectWith((p) => readableSavedPromptsSql(p, savedPrompts)),
    );
  });

  it('a team prompt is changed by the team owners/admins; a personal one by its author', async () => {
    const expected = table(`
      role    who      team  personal
      owner   creator  yes   yes
      owner   other    yes   no
      admin   creator  yes   yes
      admin   other    yes   no
      member  creator  no    yes
      member  other    no    no
    `);
    await checkRule(
      m,
      rows,
      expected,
      (p, r) => mayChangeSavedPrompt(p, facts(r)),
      selectWith((p) => changeableSavedPromptsSql(p, savedPrompts)),
    );
  });

  it('only the team owners/admins add a team prompt', () => {
    expect([m.owner, m.admin, m.memberA].map((p) => [mayAddSavedPrompt(p, 'team'), mayAddSavedPrompt(p, 'personal')])).toEqual([
      [true, true],
      [true, true],
      [false, true],
    ]);
  });
});
