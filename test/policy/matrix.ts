import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import type { Principal, Role } from '../../src/policy/index.js';
import { newTeam, startTestApp, type TestApp } from '../helpers/app.js';

/**
 * The matrix every rule is checked on: a team with an owner, an admin and two members (A and B),
 * and another team's owner. Rows are made by the owner, the admin and member A (the creators);
 * every one of the five reads every row. A case of the table is (the reader's role, whether they
 * made the row, the flag's value); another team's reader is refused everything.
 */
export interface Matrix {
  t: TestApp;
  teamId: string;
  otherTeamId: string;
  owner: Principal;
  admin: Principal;
  memberA: Principal;
  memberB: Principal;
  outsider: Principal;
  /** who makes the rows */
  creators: Principal[];
  /** who reads them */
  readers: Principal[];
}

const principal = (teamId: string, userId: number, role: Role): Principal => ({
  keyId: null,
  sessionId: null,
  userId,
  name: `${role} ${userId}`,
  email: `${role}-${userId}@example.com`,
  role,
  instanceAdmin: false,
  teamId,
  teamName: 'team',
});

export async function startMatrix(): Promise<Matrix> {
  const t = await startTestApp();
  const team = await newTeam(t);
  const other = await newTeam(t);
  const owner = principal(team.teamId, team.ownerId, 'owner');
  const admin = principal(team.teamId, (await team.addUser('admin')).id, 'admin');
  const memberA = principal(team.teamId, (await team.addUser('member')).id, 'member');
  const memberB = principal(team.teamId, (await team.addUser('member')).id, 'member');
  const outsider = principal(other.teamId, other.ownerId, 'owner');
  return {
    t,
    teamId: team.teamId,
    otherTeamId: other.teamId,
    owner,
    admin,
    memberA,
    memberB,
    outsider,
    creators: [owner, admin, memberA],
    readers: [owner, admin, memberA, memberB, outsider],
  };
}

/**
 * The expected table, one line a case: `role who flag... ` with `who` creator or other and one
 * yes/no column a flag value, named by the header line. Another team's reader is refused
 * everything unless a line `outsider any ...` says otherwise (system models).
 */
export type Expected = (role: Role | 'outsider', creator: boolean, flag: string) => boolean;
export function table(text: string): Expected {
  const lines = text
    .trim()
    .split('\n')
    .map((l) => l.trim().split(/\s+/));
  const flags = lines[0]!.slice(2);
  const cells = new Map<string, boolean>();
  for (const [role, who, ...values] of lines.slice(1)) {
    expect(values.length, `${role} ${who}`).toBe(flags.length);
    values.forEach((v, i) => cells.set(`${role} ${who} ${flags[i]}`, v === 'yes'));
  }
  for (const role of ['owner', 'admin', 'member'])
    for (const who of ['creator', 'other']) for (const f of flags) expect(cells.has(`${role} ${who} ${f}`), `${role} ${who} ${f}`).toBe(true);
  return (role, creator, flag) =>
    role === 'outsider' ? (cells.get(`outsider any ${flag}`) ?? false) : cells.get(`${role} ${creator ? 'creator' : 'other'} ${flag}`)!;
}

export interface Row {
  id: string;
  creator: Principal;
  flag: string;
}

/**
 * For every reader and row: the JavaScript predicate, and whether the SQL form selects the row,
 * each equal to the table. `select` returns the ids, among `rows`, that the SQL form keeps.
 */
export async function checkRule(
  m: Matrix,
  rows: Row[],
  expected: Expected,
  js: (reader: Principal, row: Row) => boolean,
  select: (reader: Principal, ids: string[]) => Promise<string[]>,
): Promise<void> {
  const want = (reader: Principal, row: Row) => expected(reader.teamId === m.teamId ? reader.role : 'outsider', reader.userId === row.creator.userId, row.flag);
  const label = (reader: Principal, row: Row) =>
    `${reader.name}${reader.teamId === m.teamId ? '' : ' (other team)'} on a row of ${row.creator.name} (${row.flag})`;
  for (const reader of m.readers) {
    const selected = new Set(
      await select(
        reader,
        rows.map((r) => r.id),
      ),
    );
    for (const row of rows) {
      expect(js(reader, row), `JS: ${label(reader, row)}`).toBe(want(reader, row));
      expect(selected.has(row.id), `SQL: ${label(reader, row)}`).toBe(want(reader, row));
    }
  }
}

/** One row a creator and flag value, made by `make`. */
export async function makeRows(m: Matrix, flags: string[], make: (creator: Principal, flag: string, id: string) => Promise<void>): Promise<Row[]> {
  const rows: Row[] = [];
  for (const creator of m.creators) {
    for (const flag of flags) {
      const id = randomUUID();
      await make(creator, flag, id);
      rows.push({ id, creator, flag });
    }
  }
  return rows;
}
