import { and, inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { rawRows } from '../../src/db/driver.js';
import { plusEntries } from '../../src/db/schema/plus.js';
import {
  changeablePlusSql,
  everyMemberReadsPlus,
  everyMemberReadsPlusSql,
  isTeamAdmin,
  mayChangePlus,
  mayReadPlus,
  visiblePlusSql,
  visiblePlusText,
  type Principal,
} from '../../src/policy/index.js';
import { checkRule, makeRows, startMatrix, table, type Matrix, type Row } from './matrix.js';

let m: Matrix;
let rows: Row[];
const facts = (r: Row) => ({ teamId: r.creator.teamId, userId: r.creator.userId, isPublic: r.flag === 'public' });
const READ = `
  role    who      public  private
  owner   creator  yes     yes
  owner   other    yes     yes
  admin   creator  yes     yes
  admin   other    yes     yes
  member  creator  yes     yes
  member  other    yes     no
`;

beforeAll(async () => {
  m = await startMatrix();
  rows = await makeRows(m, ['public', 'private'], async (creator, flag, id) => {
    await m.t.database.db.insert(plusEntries).values({ id, teamId: creator.teamId, userId: creator.userId, title: flag, isPublic: flag === 'public' });
  });
});
afterAll(() => m.t.close());

const selectWith = (where: (p: Principal) => ReturnType<typeof visiblePlusSql>) => async (p: Principal, ids: string[]) =>
  (
    await m.t.database.db
      .select({ id: plusEntries.id })
      .from(plusEntries)
      .where(and(where(p), inArray(plusEntries.id, ids)))
  ).map((r) => r.id);

describe('Plus entries (policy/plus.ts)', () => {
  it('public: read by every member; private: by its creator and the team owners/admins', async () => {
    await checkRule(
      m,
      rows,
      table(READ),
      (p, r) => mayReadPlus(p, facts(r)),
      selectWith((p) => visiblePlusSql(p, plusEntries)),
    );
  });

  it('the prepared statement text of the read rule selects the same entries', async () => {
    const text = `select e.id from plus_entries e where e.id = any($4::uuid[]) and ${visiblePlusText('e', { team: '$1', admin: '$2', user: '$3' })}`;
    await checkRule(
      m,
      rows,
      table(READ),
      (p, r) => mayReadPlus(p, facts(r)),
      async (p, ids) => (await rawRows<{ id: string }>(m.t.database.db, text, [p.teamId, isTeamAdmin(p), p.userId, ids])).map((r) => r.id),
    );
  });

  it('changed or deleted by its creator and the team owners/admins, public or not', async () => {
    const expected = table(`
      role    who      public  private
      owner   creator  yes     yes
      owner   other    yes     yes
      admin   creator  yes     yes
      admin   other    yes     yes
      member  creator  yes     yes
      member  other    no      no
    `);
    await checkRule(
      m,
      rows,
      expected,
      (p, r) => mayChangePlus(p, facts(r)),
      selectWith((p) => changeablePlusSql(p, plusEntries)),
    );
  });

  it("what every member reads, whoever asks (a shared thread's sources): the team's public entries", async () => {
    const expected = table(`
      role    who      public  private
      owner   creator  yes     no
      owner   other    yes     no
      admin   creator  yes     no
      admin   other    yes     no
      member  creator  yes     no
      member  other    yes     no
    `);
    await checkRule(
      m,
      rows,
      expected,
      (p, r) => everyMemberReadsPlus(facts(r), p.teamId),
      selectWith((p) => everyMemberReadsPlusSql(p.teamId, plusEntries)),
    );
  });
});
