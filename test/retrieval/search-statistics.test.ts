/**
 * The planner's statistics of plus_chunks.search written from plus_terms
 * (retrieval/search-statistics.ts): the commonest lexemes with the share of chunks holding each,
 * in the order the planner looks them up in, and cleared again below the size at which a search
 * reads in windows. Embedded database only: pg_restore_attribute_stats is PostgreSQL 18's, and
 * upkeep (which calls it) runs on PGlite only.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execute } from '../../src/db/driver.js';
import { PlusRepo } from '../../src/modules/plus/repo.js';
import { storeFiles } from '../../src/modules/plus/store.js';
import { refreshSearchStatistics } from '../../src/retrieval/search-statistics.js';
import { newPlusFile } from '../helpers/factories.js';
import { newTeam, startTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t.close();
});

const db = () => t.database.db;

/** 400 chunks: "harbour" in every one, "ledger" in every second, "timber" in every fourth, "gull" in one. */
async function seed(): Promise<void> {
  const team = await newTeam(t);
  const plusId = randomUUID();
  await new PlusRepo().insert(db(), { id: plusId, teamId: team.teamId, userId: team.ownerId, title: 'harbour' });
  const chunks = Array.from({ length: 400 }, (_, i) => {
    const words = ['harbour', i % 2 === 0 ? 'ledger' : 'quay', i % 4 === 0 ? 'timber' : 'grain', i === 7 ? 'gull' : 'cart'];
    const text = words.join(' ');
    return { idx: i, fileData: text, fileDataProcessed: text, heading: null, tokenSize: words.length };
  });
  await storeFiles(db(), [newPlusFile(team, plusId, chunks)], { first: async () => {}, last: async () => {} });
  await execute(db(), sql`analyze plus_chunks`);
}

interface Stats {
  elems: string[];
  freqs: number[];
}
async function searchStats(): Promise<Stats | null> {
  const { rows } = await execute<{ elems: string[]; freqs: number[] }>(
    db(),
    sql`select most_common_elems::text::text[] as elems, most_common_elem_freqs as freqs from pg_stats where tablename = 'plus_chunks' and attname = 'search'`,
  );
  return rows[0] ? { elems: rows[0].elems, freqs: rows[0].freqs.map(Number) } : null;
}

describe.skipIf(Boolean(process.env.ATRIUM_TEST_DATABASE_URL))('search statistics from plus_terms (embedded database)', () => {
  it('writes each lexeme with the share of chunks holding it, ordered by length then bytes, then the least and greatest share', async () => {
    await seed();
    expect(await searchStats()).toBeNull(); // ANALYZE skips the column (migration 0034)
    expect(await refreshSearchStatistics(db(), 100)).toBe('written');
    const stats = (await searchStats())!;
    const share = Object.fromEntries(stats.elems.map((e, i) => [e, stats.freqs[i]!]));
    expect(share.harbour).toBeCloseTo(1, 5);
    expect(share.ledger).toBeCloseTo(0.5, 5);
    expect(share.timber).toBeCloseTo(0.25, 5);
    expect(share.gull).toBeCloseTo(1 / 400, 5);
    const ordered = [...stats.elems].sort((a, b) => Buffer.byteLength(a) - Buffer.byteLength(b) || Buffer.compare(Buffer.from(a), Buffer.from(b)));
    expect(stats.elems).toEqual(ordered);
    expect(stats.freqs).toHaveLength(stats.elems.length + 2);
    expect(stats.freqs.slice(-2)).toEqual([Math.min(...stats.freqs.slice(0, -2)), Math.max(...stats.freqs.slice(0, -2))]);
  });

  it('the planner estimates a common lexeme from them, and without them as 0.5 % of the chunks', async () => {
    const estimate = async () => {
      const { rows } = await execute<Record<string, unknown>>(db(), sql`explain (format json) select id from plus_chunks where search @@ 'ledger'::tsquery`);
      const plan = Object.values(rows[0]!)[0];
      return (JSON.parse(typeof plan === 'string' ? plan : JSON.stringify(plan)) as Array<{ Plan: { 'Plan Rows': number } }>)[0]!.Plan['Plan Rows'];
    };
    expect(await estimate()).toBeGreaterThan(150); // 200 of 400 chunks hold it
    expect(await refreshSearchStatistics(db(), 400)).toBe('cleared'); // not more chunks than `above`
    expect(await searchStats()).toBeNull();
    expect(await estimate()).toBeLessThan(10);
  });
});
