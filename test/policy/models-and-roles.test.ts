import { and, inArray, isNull } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { models } from '../../src/db/schema/models.js';
import {
  isTeamAdmin,
  isTeamOwner,
  mayHandleRole,
  mayManageModel,
  maySeeModel,
  requireInstanceAdmin,
  requireManageModel,
  requireTeamAdmin,
  visibleModelsSql,
  type Principal,
  type Role,
} from '../../src/policy/index.js';
import { checkRule, makeRows, startMatrix, table, type Matrix, type Row } from './matrix.js';

/** A team model and a system model of each creator's (the system ones made as the instance admin would). */
let m: Matrix;
let rows: Row[];
const facts = (r: Row) => ({ teamId: r.flag === 'team' ? r.creator.teamId : null, isSystem: r.flag === 'system' });

beforeAll(async () => {
  m = await startMatrix();
  rows = await makeRows(m, ['team', 'system'], async (creator, flag, id) => {
    await m.t.database.db.insert(models).values({ id, teamId: flag === 'team' ? creator.teamId : null, isSystem: flag === 'system', name: `policy ${flag}` });
  });
});
afterAll(async () => {
  // system models are every team's: leave none behind on a shared database
  await m.t.database.db.delete(models).where(
    and(
      isNull(models.teamId),
      inArray(
        models.id,
        rows.map((r) => r.id),
      ),
    ),
  );
  await m.t.close();
});

describe('models and roles (policy/models.ts, policy/principal.ts)', () => {
  it('a team sees its own models and the system models, the one thing shared across teams', async () => {
    const expected = table(`
      role     who      team  system
      owner    creator  yes   yes
      owner    other    yes   yes
      admin    creator  yes   yes
      admin    other    yes   yes
      member   creator  yes   yes
      member   other    yes   yes
      outsider any      no    yes
    `);
    await checkRule(
      m,
      rows,
      expected,
      (p, r) => maySeeModel(p, facts(r)),
      async (p, ids) =>
        (
          await m.t.database.db
            .select({ id: models.id })
            .from(models)
            .where(and(visibleModelsSql(p.teamId, models), inArray(models.id, ids)))
        ).map((r) => r.id),
    );
  });

  it('the team owners/admins manage the team models; the instance admin alone the system models', () => {
    const manage = (p: Principal) => rows.filter((r) => r.creator === m.memberA).map((r) => mayManageModel(p, facts(r)));
    expect(manage(m.owner)).toEqual([true, false]);
    expect(manage(m.admin)).toEqual([true, false]);
    expect(manage(m.memberA)).toEqual([false, false]);
    expect(manage(m.outsider)).toEqual([false, false]);
    expect(manage({ ...m.owner, instanceAdmin: true })).toEqual([true, true]);
    expect(() => requireManageModel(m.owner, true)).toThrow(/instance admin/);
    expect(() => requireManageModel({ ...m.memberA, instanceAdmin: true }, false)).toThrow(/owner or admin/);
    expect(() => requireManageModel(m.admin, false)).not.toThrow();
  });

  it('the roles: owners/admins manage the team, owners alone handle owners, the instance admin alone creates teams', () => {
    const roles: Role[] = ['owner', 'admin', 'member'];
    expect(roles.map((role) => [isTeamAdmin({ role }), isTeamOwner({ role })])).toEqual([
      [true, true],
      [true, false],
      [false, false],
    ]);
    expect(roles.map((role) => roles.map((target) => mayHandleRole({ role }, target)))).toEqual([
      [true, true, true],
      [false, true, true],
      [false, true, true],
    ]);
    expect(mayHandleRole({ role: 'admin' }, 'member', 'owner')).toBe(false);
    expect(() => requireTeamAdmin({ role: 'member' })).toThrow();
    expect(() => requireTeamAdmin({ role: 'admin' })).not.toThrow();
    expect(() => requireInstanceAdmin({ instanceAdmin: false })).toThrow(/instance admin/);
    expect(() => requireInstanceAdmin({ instanceAdmin: true })).not.toThrow();
  });
});
