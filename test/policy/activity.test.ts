import { and, inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { promptLogs } from '../../src/db/schema/prompt-logs.js';
import { usageLedger } from '../../src/db/schema/usage.js';
import { mayReadBudget, mayReadPromptLog, mayReadUpstreamDetail, mayReadUsage, readablePromptLogsSql, readableUsageSql } from '../../src/policy/index.js';
import { checkRule, makeRows, startMatrix, table, type Matrix, type Row } from './matrix.js';

/** A prompt log and a usage-ledger row of each creator (the flag: none). */
let m: Matrix;
let rows: Row[];
const EXPECTED = `
  role    who      any
  owner   creator  yes
  owner   other    yes
  admin   creator  yes
  admin   other    yes
  member  creator  yes
  member  other    no
`;

beforeAll(async () => {
  m = await startMatrix();
  const { db } = m.t.database;
  rows = await makeRows(m, ['any'], async (creator, _flag, id) => {
    await db.insert(promptLogs).values({ id, teamId: creator.teamId, userId: creator.userId, prompt: 'p', status: 'ok' });
    await db.insert(usageLedger).values({ id, teamId: creator.teamId, userId: creator.userId, promptTokens: 1, completionTokens: 1, credits: 1, status: 'ok' });
  });
});
afterAll(() => m.t.close());

const facts = (r: Row) => ({ teamId: r.creator.teamId, userId: r.creator.userId });

describe("a team's activity (policy/activity.ts)", () => {
  it("prompt logs: the team owners/admins read all the team's, a member only their own", async () => {
    await checkRule(
      m,
      rows,
      table(EXPECTED),
      (p, r) => mayReadPromptLog(p, facts(r)),
      async (p, ids) =>
        (
          await m.t.database.db
            .select({ id: promptLogs.id })
            .from(promptLogs)
            .where(and(readablePromptLogsSql(p, promptLogs), inArray(promptLogs.id, ids)))
        ).map((r) => r.id),
    );
  });

  it('usage: likewise', async () => {
    await checkRule(
      m,
      rows,
      table(EXPECTED),
      (p, r) => mayReadUsage(p, facts(r)),
      async (p, ids) =>
        (
          await m.t.database.db
            .select({ id: usageLedger.id })
            .from(usageLedger)
            .where(and(readableUsageSql(p, usageLedger), inArray(usageLedger.id, ids)))
        ).map((r) => r.id),
    );
  });

  it("a log's upstream detail: the team owners/admins only", () => {
    expect([m.owner, m.admin, m.memberA].map(mayReadUpstreamDetail)).toEqual([true, true, false]);
  });

  it("budgets: the team owners/admins read every one; a member the team's, their own and their keys'", () => {
    const keys = new Set(['key-of-a']);
    const budgets = [
      { scope: 'team', scopeId: m.teamId },
      { scope: 'user', scopeId: String(m.memberA.userId) },
      { scope: 'user', scopeId: String(m.memberB.userId) },
      { scope: 'apiKey', scopeId: 'key-of-a' },
      { scope: 'apiKey', scopeId: 'key-of-b' },
    ] as const;
    const seen = (p: typeof m.owner) => budgets.map((b) => mayReadBudget(p, b, p === m.memberA ? keys : new Set()));
    expect(seen(m.owner)).toEqual([true, true, true, true, true]);
    expect(seen(m.admin)).toEqual([true, true, true, true, true]);
    expect(seen(m.memberA)).toEqual([true, true, false, true, false]);
    expect(seen(m.memberB)).toEqual([true, false, true, false, false]);
  });
});
