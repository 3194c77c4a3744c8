import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/client.js';
import { execute, executePrepared, rawRows } from '../../src/db/driver.js';
import { teams } from '../../src/db/schema/teams.js';
import { toProblem } from '../../src/http/problem.js';

/**
 * The embedded database on its own thread (db/pglite-thread.ts ↔ db/pglite-worker.ts), as
 * `npm start` runs it: what drizzle and the repositories rely on must come back across the thread
 * exactly as from an in-process PGlite — rows in both modes, timestamps as drizzle maps them,
 * JSON, arrays, bytes, SQLSTATE codes, transactions that commit or roll back, and data that is
 * still there after a restart. The whole API suite can also run this way:
 * ATRIUM_TEST_EMBEDDED=thread npm test.
 */
const dataDir = mkdtempSync(path.join(tmpdir(), 'atrium-thread-'));
let db: Database;

beforeAll(async () => {
  db = await openDatabase({ databaseUrl: null, dataDir, thread: true });
});
afterAll(async () => {
  await db?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('embedded database on its own thread', () => {
  it("prepares a turn's statements (executePrepared) and rawRows' once by name on the thread, rows typed as on the app's thread", async () => {
    const TYPED = sql`select ${'2026-01-02T03:04:05Z'}::timestamptz as tz, interval '1 day' as i, ${7}::bigint as big, ${'x'}::text as t, ${3}::int as n, true as b, array[1, 2]::int[] as arr, '{"a":1}'::jsonb as j`;
    const { rows: expected } = await execute<Record<string, unknown>>(db.db, TYPED);
    expect(typeof expected[0]!.tz).toBe('string');
    // PGlite's own parsers still apply under executePrepared's text types (arrays, JSON)
    expect(expected[0]).toMatchObject({ arr: [1, 2], j: { a: 1 } });
    for (let i = 0; i < 3; i++) expect((await executePrepared(db.db, TYPED)).rows).toEqual(expected);
    const q = 'select $1::int * 3 as thrice, now() as at';
    for (let i = 1; i <= 3; i++) expect(await rawRows<{ thrice: number; at: unknown }>(db.db, q, [i])).toEqual([{ thrice: i * 3, at: expect.any(Date) }]);
    const named = await rawRows<{ name: string; statement: string }>(db.db, 'select name, statement from pg_prepared_statements', []);
    const namesOf = (text: string) => named.filter((r) => r.statement === text).map((r) => r.name);
    expect(namesOf(q)).toEqual([expect.stringMatching(/^atrium_raw\d+$/)]);
    expect(
      namesOf(
        "select $1::timestamptz as tz, interval '1 day' as i, $2::bigint as big, $3::text as t, $4::int as n, true as b, array[1, 2]::int[] as arr, '{\"a\":1}'::jsonb as j",
      ),
    ).toEqual([expect.stringMatching(/^atrium_raw\d+$/)]);
    // a parameter that is not plain text goes as a query; a bad one is the database's error
    expect(await rawRows(db.db, 'select $1::int[] as a', [[1, 2]])).toEqual([{ a: [1, 2] }]);
    await expect(rawRows(db.db, 'select $1::uuid as id', ['not-a-uuid'])).rejects.toMatchObject({ code: '22P02' });
    // a prepared write is there for the next statement
    const id = '6f2b3c4d-1e2f-4a5b-8c9d-0e1f2a3b4c5d';
    await executePrepared(db.db, sql`insert into teams (id, name) values (${id}::uuid, ${'prepared on the thread'}::text)`);
    expect(await db.db.select({ name: teams.name }).from(teams).where(eq(teams.id, id))).toEqual([{ name: 'prepared on the thread' }]);
  });

  it('is migrated and answers drizzle queries, timestamps mapped to Dates', async () => {
    const [row] = await db.db.insert(teams).values({ name: 'thread team' }).returning();
    expect(row!.name).toBe('thread team');
    expect(row!.created).toBeInstanceOf(Date);
    const [again] = await db.db.select().from(teams).where(eq(teams.id, row!.id));
    expect(again!.created.getTime()).toBe(row!.created.getTime());
  });

  it('carries JSON, arrays, bytes, big integers and NULL across the thread', async () => {
    const res = await db.db.execute(
      sql`select '{"a":[1,2]}'::jsonb as j, array[1.5,2.5]::real[] as r, '\\x0102'::bytea as b, 9007199254740993::int8 as n, null::text as z, interval '2 days' as i`,
    );
    const r = (res as unknown as { rows: Array<Record<string, unknown>> }).rows[0]!;
    expect(r.j).toEqual({ a: [1, 2] });
    expect(r.r).toEqual([1.5, 2.5]);
    expect(Array.from(r.b as Uint8Array)).toEqual([1, 2]);
    expect(String(r.n)).toBe('9007199254740993');
    expect(r.z).toBeNull();
    expect(r.i).toBe('2 days'); // drizzle's identity parser for intervals crossed the thread
  });

  it('reports database errors with their SQLSTATE, which the problem mapper reads', async () => {
    const [row] = await db.db.insert(teams).values({ name: 'dup' }).returning();
    const err = await db.db
      .insert(teams)
      .values({ id: row!.id, name: 'dup again' })
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(err).not.toBeNull();
    expect(toProblem(err).problem.status).toBe(409);
    const syntax = await db.db.execute(sql`selec 1`).then(
      () => null,
      (e: unknown) => e,
    );
    expect(String((syntax as { cause?: { code?: string } }).cause?.code)).toBe('42601');
  });

  it('commits a transaction, and rolls back one that throws', async () => {
    const id = await db.db.transaction(async (tx) => {
      const [r] = await tx.insert(teams).values({ name: 'committed' }).returning();
      return r!.id;
    });
    expect(await db.db.select().from(teams).where(eq(teams.id, id))).toHaveLength(1);

    let inside = '';
    const err = await db.db
      .transaction(async (tx) => {
        const [r] = await tx.insert(teams).values({ name: 'rolled back' }).returning();
        inside = r!.id;
        expect(await tx.select().from(teams).where(eq(teams.id, inside))).toHaveLength(1);
        throw new Error('no thanks');
      })
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect((err as Error).message).toBe('no thanks');
    expect(await db.db.select().from(teams).where(eq(teams.id, inside))).toHaveLength(0);
  });

  it('keeps queries outside a transaction waiting until it ends (one connection, as in-process)', async () => {
    const order: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const tx = db.db.transaction(async (t) => {
      await t.insert(teams).values({ name: 'tx first' });
      order.push('tx wrote');
      await gate;
      order.push('tx ends');
    });
    const outside = db.db
      .select()
      .from(teams)
      .then(() => order.push('outside read'));
    await new Promise((r) => setTimeout(r, 50));
    release();
    await Promise.all([tx, outside]);
    expect(order).toEqual(['tx wrote', 'tx ends', 'outside read']);
  });

  it('lets other statements pass a bulk one that waits: a request asked after it goes first', async () => {
    await db.db.execute(sql`create sequence if not exists bulk_order`);
    const next = async (d: typeof db.db) =>
      Number(((await d.execute(sql`select nextval('bulk_order') as n`)) as unknown as { rows: [{ n: string }] }).rows[0].n);
    // a request's statement in flight, a bulk statement asked for, then the request's next one
    const first = db.db.execute(sql`select pg_sleep(0.05)`);
    const bulk = next(db.bulk);
    const request = next(db.db);
    await first;
    const [b, r] = await Promise.all([bulk, request]);
    expect(r).toBeLessThan(b);
  });

  it('makes a bulk transaction wait the same way, and holds back other bulk work until it ends', async () => {
    await db.db.execute(sql`create sequence if not exists bulk_order`);
    const nextIn = async (d: Pick<typeof db.db, 'execute'>) =>
      Number(((await d.execute(sql`select nextval('bulk_order') as n`)) as unknown as { rows: [{ n: string }] }).rows[0].n);
    // (shorter than the longest wait: an overdue BEGIN would take PGlite's transaction lock, which a plain query then waits for)
    const first = db.db.execute(sql`select pg_sleep(0.01)`);
    const tx = db.bulk.transaction(async (t) => {
      const a = await nextIn(t);
      await new Promise((r) => setTimeout(r, 30)); // other bulk work must not start meanwhile
      return [a, await nextIn(t)];
    });
    const laterBulk = nextIn(db.bulk);
    const request = nextIn(db.db);
    await first;
    const [[a, b], later, r] = await Promise.all([tx, laterBulk, request]);
    expect(r).toBeLessThan(a!);
    expect(b).toBe(a! + 1);
    expect(later).toBeGreaterThan(b!);
  });

  it('never starves bulk work: under a steady stream of statements a bulk one still runs', async () => {
    let bulkDone = false;
    const bulk = db.bulk.execute(sql`select 1`).then(() => (bulkDone = true));
    let others = 0;
    while (!bulkDone && others < 5000) {
      await db.db.execute(sql`select 1`);
      others++;
    }
    await bulk;
    expect(others).toBeLessThan(5000); // it ran while the others kept coming
  });

  it('settles a lull only once nothing has run for its quiet time, or at its limit under a steady stream', async () => {
    // a stream of statements with no gap near 40 ms: the lull settles after its last one
    let lastEnded = 0;
    const first = db.db.execute(sql`select 1`); // in flight: the lull cannot begin before it
    const lull = db.lull!(40, 60_000).then(() => performance.now());
    await first;
    for (let i = 0; i < 200; i++) {
      await db.db.execute(sql`select 1`);
      lastEnded = performance.now();
    }
    expect(await lull).toBeGreaterThan(lastEnded);
    // a stream that never pauses: the limit settles it, and the stream stops then
    let settled = false;
    const busy = db.db.execute(sql`select 1`);
    const limited = db.lull!(60_000, 20).then(() => (settled = true));
    await busy;
    let ran = 0;
    while (!settled && ran < 100_000) {
      await db.db.execute(sql`select 1`);
      ran++;
    }
    await limited;
    expect(ran).toBeLessThan(100_000);
  });

  it('runs a transaction asked of the bulk client, and fails its waiting statements once closed', async () => {
    const [row] = await db.bulk.transaction(async (t) => t.insert(teams).values({ name: 'bulk tx' }).returning());
    expect((await db.db.select().from(teams).where(eq(teams.id, row!.id))).length).toBe(1);
    const other = await openDatabase({ databaseUrl: null, dataDir: mkdtempSync(path.join(tmpdir(), 'atrium-thread-')), thread: true });
    const busy = other.db.execute(sql`select pg_sleep(0.01)`).catch(() => 'cut short by the close');
    const waiting = other.bulk.execute(sql`select 1`); // gives way to the statement in flight, then to the close
    const lull = other.lull!(60_000, 60_000);
    await other.close();
    await expect(waiting).rejects.toThrow(); // refused, never left waiting
    await lull; // settled by the close, not left waiting a minute
    await busy;
  });

  it('keeps what it stored across a restart, and refuses queries once closed', async () => {
    await db.db.insert(teams).values({ name: 'survivor' });
    await db.close();
    await expect(db.ping()).rejects.toThrow();
    db = await openDatabase({ databaseUrl: null, dataDir, thread: true });
    const rows = await db.db.select().from(teams).where(eq(teams.name, 'survivor'));
    expect(rows).toHaveLength(1);
  });
});
