import { and, inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { workspaces } from '../../src/db/schema/workspaces.js';
import { canSeeWorkspace, manageableWorkspaceSql, mayManageWorkspace, visibleWorkspaceSql, type SharingType } from '../../src/policy/index.js';
import { checkRule, makeRows, startMatrix, table, type Matrix, type Row } from './matrix.js';

let m: Matrix;
let rows: Row[];
const facts = (r: Row) => ({ teamId: r.creator.teamId, userId: r.creator.userId, sharingType: r.flag as SharingType });

beforeAll(async () => {
  m = await startMatrix();
  rows = await makeRows(m, ['TEAM', 'PRIVATE'], async (creator, flag, id) => {
    await m.t.database.db.insert(workspaces).values({
      id,
      teamId: creator.teamId,
      userId: creator.userId,
      name: `${creator.name} ${flag}`,
      chatHistoryType: 'TEAM',
      contextType: 'SHARED',
      sharingType: flag as SharingType,
    });
  });
});
afterAll(() => m.t.close());

describe('workspaces (policy/workspaces.ts)', () => {
  it('TEAM: seen by every member of the team; PRIVATE: by its creator only, a team owner/admin included', async () => {
    const expected = table(`
      role    who      TEAM  PRIVATE
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
      (p, r) => canSeeWorkspace(p, facts(r)),
      async (p, ids) =>
        (
          await m.t.database.db
            .select({ id: workspaces.id })
            .from(workspaces)
            .where(and(visibleWorkspaceSql(p, workspaces), inArray(workspaces.id, ids)))
        ).map((r) => r.id),
    );
  });

  it('managed (changed, deleted) by its creator and the team owners/admins who see it', async () => {
    const expected = table(`
      role    who      TEAM  PRIVATE
      owner   creator  yes   yes
      owner   other    yes   no
      admin   creator  yes   yes
      admin   other    yes   no
      member  creator  yes   yes
      member  other    no    no
    `);
    await checkRule(
      m,
      rows,
      expected,
      (p, r) => mayManageWorkspace(p, facts(r)),
      async (p, ids) =>
        (
          await m.t.database.db
            .select({ id: workspaces.id })
            .from(workspaces)
            .where(and(manageableWorkspaceSql(p, workspaces), inArray(workspaces.id, ids)))
        ).map((r) => r.id),
    );
  });
});
