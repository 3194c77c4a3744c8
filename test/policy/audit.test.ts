import { and, inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditLog } from '../../src/db/schema/audit.js';
import { mayReadAuditEntry, mayReadAuditLog, readableAuditSql, type Principal } from '../../src/policy/index.js';
import { checkRule, makeRows, startMatrix, table, type Matrix, type Row } from './matrix.js';

/** An audit entry of each creator's action in the team, and one of no team (a failed sign-in of an unknown email). */
let m: Matrix;
let rows: Row[];
const teamOf = (r: Row) => (r.flag === 'team' ? r.creator.teamId : null);

beforeAll(async () => {
  m = await startMatrix();
  rows = await makeRows(m, ['team', 'none'], async (creator, flag, id) => {
    await m.t.database.db
      .insert(auditLog)
      .values({ id, teamId: flag === 'team' ? creator.teamId : null, actorUserId: creator.userId, action: 'policy.test', outcome: 'success' });
  });
});
afterAll(() => m.t.close());

const select = async (p: Principal, ids: string[]) =>
  (
    await m.t.database.db
      .select({ id: auditLog.id })
      .from(auditLog)
      .where(and(readableAuditSql(p, auditLog), inArray(auditLog.id, ids)))
  ).map((r) => r.id);

describe('the audit log (policy/audit.ts)', () => {
  it("the team owners/admins read their team's entries; a member none; no one of a team an entry of no team", async () => {
    const expected = table(`
      role    who      team  none
      owner   creator  yes   no
      owner   other    yes   no
      admin   creator  yes   no
      admin   other    yes   no
      member  creator  no    no
      member  other    no    no
    `);
    await checkRule(m, rows, expected, (p, r) => mayReadAuditEntry(p, { teamId: teamOf(r) }), select);
    expect([m.owner, m.admin, m.memberA].map(mayReadAuditLog)).toEqual([true, true, false]);
  });

  it('the instance admin reads every entry, of every team and of none', async () => {
    const instanceAdmin = { ...m.outsider, instanceAdmin: true };
    expect(rows.map((r) => mayReadAuditEntry(instanceAdmin, { teamId: teamOf(r) }))).toEqual(rows.map(() => true));
    expect(
      new Set(
        await select(
          instanceAdmin,
          rows.map((r) => r.id),
        ),
      ),
    ).toEqual(new Set(rows.map((r) => r.id)));
    expect(mayReadAuditLog({ role: 'member', instanceAdmin: true })).toBe(true);
  });
});
