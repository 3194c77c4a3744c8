import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openDatabase, type Database } from '../../src/db/client.js';
import { MAX_PREPARED, rawRows, REPREPARE_AFTER_MS } from '../../src/db/driver.js';

/**
 * rawRows (db/driver.ts): on PGlite in this process a statement prepared by name and run as one
 * protocol message, elsewhere the driver's query — the same rows either way, and the database
 * left usable after a failure. Runs on the suite's database (PGlite in memory, or PostgreSQL).
 */
let database: Database;
beforeAll(async () => {
  database = await openDatabase({ databaseUrl: process.env.ATRIUM_TEST_DATABASE_URL || 'memory://', dataDir: '/nonexistent' });
  await database.db.execute(sql`drop table if exists raw_t`);
  await database.db.execute(sql`create table raw_t (id bigint primary key, n int, label text, flag boolean, seen timestamptz)`);
});
afterAll(async () => {
  await database.db.execute(sql`drop table if exists raw_t`);
  await database.close();
});

const TYPED = 'select $1::int as n, $2::bigint as big, $3::text as label, $4::boolean as flag, $5::text as nothing, $6::uuid as id';

describe('rawRows', () => {
  it('returns the rows the driver query returns, types parsed the same way, on every run', async () => {
    const params = [7, '9007199254740993', "it's", true, null, '6f2b3c4d-1e2f-4a5b-8c9d-0e1f2a3b4c5d'];
    const client = (database.db as unknown as { $client: { query(t: string, p: unknown[]): Promise<{ rows: unknown[] }> } }).$client;
    const expected = (await client.query(TYPED, params)).rows;
    expect(expected).toHaveLength(1);
    for (let i = 0; i < 3; i++) expect(await rawRows(database.db, TYPED, params)).toEqual(expected);
    expect(await rawRows(database.db, TYPED, [-1, 0, '', false, null, params[5]])).toEqual([
      { n: -1, big: expect.anything(), label: '', flag: false, nothing: null, id: params[5] },
    ]);
  });

  it('many rows, none, and a statement that changes with the data it reads', async () => {
    await database.db.execute(sql`insert into raw_t (id, n, label) select g, g * 2, 'row ' || g from generate_series(1, 300) g`);
    const q = 'select id, n, label from raw_t where id = any($1::bigint[]) order by id';
    const rows = await rawRows<{ id: number | string; n: number; label: string }>(database.db, q, [
      `{${Array.from({ length: 300 }, (_, i) => i + 1).join(',')}}`,
    ]);
    expect(rows).toHaveLength(300);
    expect(rows.map((r) => [Number(r.id), r.n, r.label])[299]).toEqual([300, 600, 'row 300']);
    expect(await rawRows(database.db, q, ['{}'])).toEqual([]);
    await database.db.execute(sql`delete from raw_t where id > 1`);
    expect(await rawRows(database.db, q, ['{1,2}'])).toHaveLength(1);
  });

  it.skipIf(process.env.ATRIUM_TEST_DATABASE_URL)('on PGlite in this process, each text is prepared once, by name', async () => {
    const q = 'select $1::int * 2 as twice';
    for (let i = 1; i <= 3; i++) expect(await rawRows(database.db, q, [i])).toEqual([{ twice: i * 2 }]);
    const prepared = await rawRows<{ name: string }>(
      database.db,
      "select name from pg_prepared_statements where statement = 'select $1::int * 2 as twice'",
      [],
    );
    expect(prepared).toHaveLength(1);
    expect(prepared[0]!.name).toMatch(/^atrium_raw\d+$/);
  });

  it.skipIf(process.env.ATRIUM_TEST_DATABASE_URL)(
    'a statement prepared REPREPARE_AFTER_MS ago is prepared anew (planned for the tables as they are now), its old name closed',
    async () => {
      const q = 'select $1::int * 5 as five';
      const names = async () =>
        (await rawRows<{ name: string }>(database.db, "select name from pg_prepared_statements where statement = 'select $1::int * 5 as five'", [])).map(
          (r) => r.name,
        );
      expect(await rawRows(database.db, q, [1])).toEqual([{ five: 5 }]);
      const first = await names();
      expect(first).toHaveLength(1);
      expect(await rawRows(database.db, q, [2])).toEqual([{ five: 10 }]);
      expect(await names()).toEqual(first); // within the time: the same statement
      const now = performance.now.bind(performance);
      const later = vi.spyOn(performance, 'now').mockImplementation(() => now() + REPREPARE_AFTER_MS + 1);
      try {
        expect(await rawRows(database.db, q, [3])).toEqual([{ five: 15 }]);
      } finally {
        later.mockRestore();
      }
      const second = await names();
      expect(second).toHaveLength(1);
      expect(second[0]).not.toBe(first[0]);
    },
  );

  it.skipIf(process.env.ATRIUM_TEST_DATABASE_URL)('holds at most MAX_PREPARED statements: a new text beyond closes the least recently used', async () => {
    const text = (i: number) => `select $1::int + ${i} as lru_${i}`;
    for (let i = 0; i < MAX_PREPARED; i++) expect(await rawRows(database.db, text(i), [1])).toEqual([{ [`lru_${i}`]: 1 + i }]);
    expect(await rawRows(database.db, text(0), [2])).toEqual([{ lru_0: 2 }]); // used again: now the most recent
    for (let i = MAX_PREPARED; i < MAX_PREPARED + 8; i++) expect(await rawRows(database.db, text(i), [1])).toEqual([{ [`lru_${i}`]: 1 + i }]);
    const named = await rawRows<{ statement: string }>(database.db, 'select statement from pg_prepared_statements', []);
    expect(named.length).toBeLessThanOrEqual(MAX_PREPARED);
    const held = new Set(named.map((r) => r.statement));
    expect(held.has(text(0))).toBe(true);
    expect(held.has(text(1))).toBe(false);
    expect(held.has(text(MAX_PREPARED + 7))).toBe(true);
    expect(await rawRows(database.db, text(1), [5])).toEqual([{ lru_1: 6 }]); // prepared again when asked
  });

  it('parameters that are not plain text (an array, JSON, bytes) are sent as the driver sends them', async () => {
    expect(await rawRows(database.db, 'select $1::int[] as a, $2::jsonb as j', [[1, 2, 3], JSON.stringify({ k: [1] })])).toEqual([
      { a: [1, 2, 3], j: { k: [1] } },
    ]);
    expect(await rawRows(database.db, 'select $1::int[] as a, $2::jsonb as j', ['{4}', '{"k":2}'])).toEqual([{ a: [4], j: { k: 2 } }]);
  });

  it('a statement dropped under it (DEALLOCATE ALL) is prepared again', async () => {
    const q = 'select $1::int + 100 as n';
    expect(await rawRows(database.db, q, [1])).toEqual([{ n: 101 }]);
    await database.db.execute(sql`deallocate all`);
    expect(await rawRows(database.db, q, [2])).toEqual([{ n: 102 }]);
    expect(await rawRows(database.db, 'select $1::int * 2 as twice', [5])).toEqual([{ twice: 10 }]);
  });

  it.skipIf(process.env.ATRIUM_TEST_DATABASE_URL)('reads issued before close() are answered; reads after it fail as PGlite fails them', async () => {
    const other = await openDatabase({ databaseUrl: 'memory://', dataDir: '/nonexistent' });
    const q = 'select $1::int as n';
    expect(await rawRows(other.db, q, [0])).toEqual([{ n: 0 }]);
    const before = [1, 2, 3, 4, 5].map((i) => rawRows(other.db, q, [i]));
    const closed = other.close();
    expect(await Promise.all(before)).toEqual([1, 2, 3, 4, 5].map((n) => [{ n }]));
    await closed;
    await expect(rawRows(other.db, q, [6])).rejects.toThrow(/clos/i);
  });

  it('a bad parameter on the first run fails that run only; the statement then works', async () => {
    const q = 'select $1::uuid as id, $2::int + 1 as next';
    await expect(rawRows(database.db, q, ['not-a-uuid', 1])).rejects.toMatchObject({ code: '22P02' });
    expect(await rawRows(database.db, q, ['6f2b3c4d-1e2f-4a5b-8c9d-0e1f2a3b4c5d', 1])).toEqual([{ id: '6f2b3c4d-1e2f-4a5b-8c9d-0e1f2a3b4c5d', next: 2 }]);
    await expect(rawRows(database.db, q, ['6f2b3c4d-1e2f-4a5b-8c9d-0e1f2a3b4c5d', 'x'])).rejects.toMatchObject({ code: '22P02' });
    expect(await rawRows(database.db, q, ['6f2b3c4d-1e2f-4a5b-8c9d-0e1f2a3b4c5d', 41])).toEqual([{ id: '6f2b3c4d-1e2f-4a5b-8c9d-0e1f2a3b4c5d', next: 42 }]);
  });

  it('a statement that does not parse is an error each time, and leaves the database usable', async () => {
    await expect(rawRows(database.db, 'selec 1', [])).rejects.toMatchObject({ code: '42601' });
    await expect(rawRows(database.db, 'selec 1', [])).rejects.toMatchObject({ code: '42601' });
    expect(await rawRows(database.db, 'select 1 as one', [])).toEqual([{ one: 1 }]);
  });

  it("never runs inside another caller's open transaction: it waits, and sees nothing of what that transaction rolled back", async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let inserted!: () => void;
    const didInsert = new Promise<void>((r) => (inserted = r));
    const tx = database.db.transaction(async (t) => {
      await t.execute(sql`insert into raw_t (id, n, label) values (1000, 1, 'in a transaction')`);
      inserted();
      await held;
      throw new Error('roll back');
    });
    await didInsert;
    // started while the transaction is open with its row inserted but not committed
    const read = rawRows<{ n: number }>(database.db, 'select count(*)::int as n from raw_t where id = $1::bigint', [1000]);
    release();
    await expect(tx).rejects.toThrow('roll back');
    expect(await read).toEqual([{ n: 0 }]);
  });
});
