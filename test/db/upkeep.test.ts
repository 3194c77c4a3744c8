/**
 * The embedded database's upkeep (src/db/upkeep.ts): tables past autovacuum's thresholds are
 * analysed (and vacuumed), tables below them are left alone. Runs on the suite's database (the
 * function is the same SQL on PostgreSQL, where the app does not schedule it).
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/client.js';
import { execute } from '../../src/db/driver.js';
import { TABLE_RULES, upkeep, UPKEEP_LULL } from '../../src/db/upkeep.js';

const PG_URL = process.env.ATRIUM_TEST_DATABASE_URL;
let database: Database;

beforeAll(async () => {
  database = await openDatabase({ databaseUrl: PG_URL || 'memory://', dataDir: '/nonexistent' });
});
afterAll(async () => {
  await database.close();
});

const lastAnalyzed = async (table: string) =>
  (
    await execute<{ at: string | null }>(
      database.db,
      sql`select coalesce(last_analyze, last_autoanalyze)::text as at from pg_stat_user_tables where schemaname = 'public' and relname = ${table}`,
    )
  ).rows[0]?.at ?? null;

describe('embedded database upkeep', () => {
  it('analyses and vacuums a table past the thresholds, and leaves a quiet one alone', async () => {
    const table = `upkeep_${randomUUID().replace(/-/g, '')}`;
    const quiet = `${table}_quiet`;
    await execute(database.db, sql.raw(`create table ${table} (id serial primary key, v text)`));
    await execute(database.db, sql.raw(`create table ${quiet} (id serial primary key, v text)`));
    try {
      await upkeep(database.db); // whatever the suite left past its thresholds, so the next run sees only this test's tables
      await execute(database.db, sql.raw(`insert into ${table} (v) select 'row ' || g from generate_series(1, 3000) g`));
      await execute(database.db, sql.raw(`update ${table} set v = v || '!' where id <= 2000`));
      await execute(database.db, sql.raw(`insert into ${quiet} (v) values ('one'), ('two')`));
      await execute(database.db, sql.raw(`analyze ${quiet}`));
      expect(await lastAnalyzed(table)).toBeNull();

      const lulls: Array<[number, number]> = [];
      const done = await upkeep(database.db, TABLE_RULES, async (quietMs, atMostMs) => void lulls.push([quietMs, atMostMs]));
      // a lull of UPKEEP_LULL awaited before each VACUUM and ANALYZE
      expect(lulls).toEqual(Array(done.analyzed.length + done.vacuumed.length).fill([UPKEEP_LULL.quietMs, UPKEEP_LULL.atMostMs]));
      expect(done.analyzed).toContain(table);
      expect(done.vacuumed).toContain(table); // 2,000 dead rows > 50 + 20 % of 3,000
      expect(done.analyzed).not.toContain(quiet); // two rows, analysed already
      expect(await lastAnalyzed(table)).not.toBeNull();
      // analysed from a sample of 3,000 rows (target 10): a histogram of at most 11 bounds, not 101
      const { rows } = await execute<{ bounds: number }>(
        database.db,
        sql`select array_length(histogram_bounds::text::text[], 1) as bounds from pg_stats where schemaname = 'public' and tablename = ${table} and attname = 'id'`,
      );
      expect(Number(rows[0]!.bounds)).toBeGreaterThan(1);
      expect(Number(rows[0]!.bounds)).toBeLessThanOrEqual(11);

      // Nothing changed since: the next run leaves it alone.
      expect((await upkeep(database.db)).analyzed).not.toContain(table);
    } finally {
      await execute(database.db, sql.raw(`drop table ${table}`));
      await execute(database.db, sql.raw(`drop table ${quiet}`));
    }
  });

  it('keeps a table with a rule otherwise: rows inserted are no reason to vacuum it, and it is analysed from its own sample', async () => {
    const table = `upkeep_${randomUUID().replace(/-/g, '')}`;
    await execute(database.db, sql.raw(`create table ${table} (id serial primary key, body text)`));
    await execute(database.db, sql.raw(`alter table ${table} alter column body set statistics 0`)); // as migration 0034 does for plus_chunks' texts
    const rules = { [table]: { vacuumOnInsert: false, statisticsTarget: 2 } };
    try {
      await upkeep(database.db, rules);
      await execute(database.db, sql.raw(`insert into ${table} (body) select repeat('word ', 50) || g from generate_series(1, 3000) g`));
      const done = await upkeep(database.db, rules);
      expect(done.analyzed).toContain(table);
      expect(done.vacuumed).not.toContain(table); // 3,000 inserted rows, which would vacuum a table without the rule
      const { rows } = await execute<{ attname: string; bounds: number | null }>(
        database.db,
        sql`select attname, array_length(histogram_bounds::text::text[], 1) as bounds from pg_stats where schemaname = 'public' and tablename = ${table} order by attname`,
      );
      // no statistics for the column set to 0; from a sample of 600 rows (target 2), at most 3 bounds
      expect(rows.map((r) => r.attname)).toEqual(['id']);
      expect(Number(rows[0]!.bounds)).toBeLessThanOrEqual(3);
      // analysed whole: its change counter was reset, so the next run leaves it alone
      expect((await upkeep(database.db, rules)).analyzed).not.toContain(table);
      // dead rows still are reason to vacuum it
      await execute(database.db, sql.raw(`delete from ${table} where id <= 2000`));
      expect((await upkeep(database.db, rules)).vacuumed).toContain(table);
    } finally {
      await execute(database.db, sql.raw(`drop table ${table}`));
    }
  });

  it("collects no statistics on plus_chunks' texts and tsvector (migration 0034)", async () => {
    const { rows } = await execute<{ attname: string; target: number | null }>(
      database.db,
      sql`select a.attname, a.attstattarget as target from pg_attribute a
          where a.attrelid = 'plus_chunks'::regclass and a.attname in ('file_data', 'file_data_processed', 'search', 'plus_id') order by a.attname`,
    );
    expect(rows.map((r) => [r.attname, r.target === null ? null : Number(r.target)])).toEqual([
      ['file_data', 0],
      ['file_data_processed', 0],
      ['plus_id', expect.toSatisfy((t: number | null) => t === null || t === -1)],
      ['search', 0],
    ]);
  });
});
