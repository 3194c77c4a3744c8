import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse, PGlite, protocol } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/client.js';
import { execute, executePrepared, INTERNALS, MIGRATIONS_TABLE, rawRows, schemaUpToDate } from '../../src/db/driver.js';
import { MIGRATIONS } from '../../src/db/files.js';
import { promptLogs } from '../../src/db/schema/prompt-logs.js';

/**
 * A contract test of each internal db/driver.ts relies upon (INTERNALS), on the versions
 * package.json pins: when an upgrade changes one, its test here fails. PGlite's internals run
 * on the suite's PGlite and are skipped (by name) on a PostgreSQL run; the rest run on both.
 */
const PG_URL = process.env.ATRIUM_TEST_DATABASE_URL;
const onPglite = it.skipIf(Boolean(PG_URL));
const onPostgres = it.skipIf(!PG_URL);

let database: Database;
/** The suite's PGlite with the internals the seam uses (PGlite's types keep some of them out). */
type PgliteWithInternals = PGlite & {
  _checkReady(): Promise<void>;
  _runExclusiveQuery<T>(f: () => Promise<T>): Promise<T>;
  _runExclusiveTransaction<T>(f: () => Promise<T>): Promise<T>;
};
const pglite = () => (database.db as unknown as { $client: PgliteWithInternals }).$client;

beforeAll(async () => {
  database = await openDatabase({ databaseUrl: PG_URL || 'memory://', dataDir: '/nonexistent' });
});
afterAll(async () => {
  await database.close();
});

const deferred = () => {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
};
/** A few turns of the event loop: long enough for anything not held back to have run. */
const turns = async (n = 5) => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
};
const message = (...parts: Uint8Array[]) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
};

const tested = new Set<string>();
const contract = (name: keyof typeof INTERNALS, body: () => void) => {
  tested.add(name);
  describe(`${name} (${INTERNALS[name].package} ${INTERNALS[name].version})`, body);
};

contract('pgliteCheckReady', () => {
  onPglite('resolves on an open PGlite, rejects as query does once it is closed', async () => {
    await expect(pglite()._checkReady()).resolves.toBeUndefined();
    const other = (await PGlite.create()) as PgliteWithInternals;
    await other._checkReady();
    await other.close();
    await expect(other._checkReady()).rejects.toThrow(/clos/i);
    await expect(other.query('select 1')).rejects.toThrow(/clos/i);
  });
});

contract('pgliteTransactionLock', () => {
  onPglite('holds a function back until an open transaction ends, and query waits for it the same way', async () => {
    const pg = pglite();
    const events: string[] = [];
    const entered = deferred();
    const release = deferred();
    const tx = pg.transaction(async () => {
      entered.resolve();
      await release.promise;
      events.push('transaction ended');
    });
    await entered.promise;
    const locked = pg._runExclusiveTransaction(async () => void events.push('locked function ran'));
    const query = pg.query('select 1').then(() => void events.push('query ran'));
    await turns();
    expect(events).toEqual([]);
    release.resolve();
    await Promise.all([tx, locked, query]);
    expect(events).toEqual(['transaction ended', 'locked function ran', 'query ran']);
  });
});

contract('pgliteQueryLock', () => {
  onPglite('runs its callers one at a time, in order, and query waits for it', async () => {
    const pg = pglite();
    const events: string[] = [];
    const release = deferred();
    const first = pg._runExclusiveQuery(async () => {
      events.push('first started');
      await release.promise;
      events.push('first ended');
    });
    const second = pg._runExclusiveQuery(async () => void events.push('second started'));
    const query = pg.query('select 1').then(() => void events.push('query ran'));
    await turns();
    expect(events).toEqual(['first started']);
    release.resolve();
    await Promise.all([first, second, query]);
    expect(events).toEqual(['first started', 'first ended', 'second started', 'query ran']);
  });
});

contract('pgliteExecProtocol', () => {
  onPglite('runs several protocol messages in one call under the locks query takes (no lock of its own), and rejects with the SQLSTATE', async () => {
    const pg = pglite();
    const s = protocol.serialize;
    const run = (m: Uint8Array) => pg._runExclusiveTransaction(() => pg._runExclusiveQuery(() => pg.execProtocol(m, { syncToFs: false, throwOnError: true })));
    const { messages } = await run(
      message(s.parse({ text: 'select $1::int + 1 as n' }), s.bind({ values: ['41'] }), s.describe({ type: 'P' }), s.execute({}), s.sync()),
    );
    expect(messages.map((m) => m.name)).toEqual(expect.arrayContaining(['parseComplete', 'bindComplete', 'rowDescription', 'dataRow', 'readyForQuery']));
    await expect(run(message(s.parse({ text: 'selec 1' }), s.sync()))).rejects.toMatchObject({ code: '42601' });
    // the database is usable after the error
    expect((await pg.query<{ one: number }>('select 1 as one')).rows).toEqual([{ one: 1 }]);
  });

  onPglite('closes named statements and parses another in one call; closing a name that does not exist is no error', async () => {
    const pg = pglite();
    const s = protocol.serialize;
    const run = (m: Uint8Array) => pg._runExclusiveTransaction(() => pg._runExclusiveQuery(() => pg.execProtocol(m, { syncToFs: false, throwOnError: true })));
    const named = async () =>
      (await pg.query<{ name: string }>("select name from pg_prepared_statements where name like 'atrium_contract_%' order by name")).rows;
    await run(message(s.parse({ name: 'atrium_contract_a', text: 'select 1' }), s.sync()));
    expect(await named()).toEqual([{ name: 'atrium_contract_a' }]);
    await run(
      message(
        s.close({ type: 'S', name: 'atrium_contract_a' }),
        s.close({ type: 'S', name: 'atrium_contract_none' }),
        s.parse({ name: 'atrium_contract_b', text: 'select 2' }),
        s.sync(),
      ),
    );
    expect(await named()).toEqual([{ name: 'atrium_contract_b' }]);
    await run(message(s.close({ type: 'S', name: 'atrium_contract_b' }), s.sync()));
  });
});

contract('pgliteSerialize', () => {
  it('serializes parse, bind (named statement, text values), describe, execute, close and sync to frontend messages', () => {
    const s = protocol.serialize;
    const parsed = s.parse({ name: 'atrium_raw_t', text: 'select $1::text' });
    expect(parsed[0]).toBe('P'.charCodeAt(0));
    expect(s.bind({ statement: 'atrium_raw_t', values: ['x', null] })[0]).toBe('B'.charCodeAt(0));
    expect(s.describe({ type: 'P' })[0]).toBe('D'.charCodeAt(0));
    expect(s.execute({})[0]).toBe('E'.charCodeAt(0));
    expect(s.close({ type: 'S', name: 'atrium_raw_t' })[0]).toBe('C'.charCodeAt(0));
    expect(Array.from(s.sync())).toEqual(['S'.charCodeAt(0), 0, 0, 0, 4]);
  });
});

contract('pgliteParseResults', () => {
  onPglite(
    "parses protocol messages with the instance's parsers into the rows query returns (int8 a number, timestamptz a Date), with parsers passed over them",
    async () => {
      const pg = pglite();
      const text =
        "select 5::bigint as small, 9007199254740993::bigint as big, $1::timestamptz as tz, 1.5::numeric as num, '{\"a\":1}'::jsonb as j, array['x']::text[] as arr";
      const params = ['2026-01-02T03:04:05.000Z'];
      const expected = (await pg.query(text, params)).rows;
      const s = protocol.serialize;
      const { messages } = await pg._runExclusiveQuery(() =>
        pg.execProtocol(message(s.parse({ text }), s.bind({ values: params }), s.describe({ type: 'P' }), s.execute({}), s.sync()), {
          throwOnError: true,
        }),
      );
      const rows = parse.parseResults(messages, pg.parsers)[0]!.rows;
      expect(rows).toEqual(expected);
      expect(rows[0]).toMatchObject({ small: 5, tz: new Date(params[0]!), num: '1.5', j: { a: 1 }, arr: ['x'] });
      const asText = parse.parseResults(messages, pg.parsers, { parsers: { 1184: (v: string) => v } })[0]!.rows[0] as { tz: unknown };
      expect(typeof asText.tz).toBe('string');
    },
  );
});

contract('drizzleMigrationsTable', () => {
  it('records each applied migration with its journal time in created_at, where schemaUpToDate reads it', async () => {
    const journal = JSON.parse(readFileSync(path.join(MIGRATIONS, 'meta', '_journal.json'), 'utf8')) as { entries: Array<{ when: number }> };
    const table = sql.raw(`${MIGRATIONS_TABLE.migrationsSchema}.${MIGRATIONS_TABLE.migrationsTable}`);
    const { rows } = await execute<{ created_at: string | number; hash: string }>(database.db, sql`select created_at, hash from ${table} order by created_at`);
    expect(rows.map((r) => Number(r.created_at))).toEqual(journal.entries.map((e) => e.when).sort((a, b) => a - b));
    expect(rows.every((r) => /^[0-9a-f]{64}$/.test(r.hash))).toBe(true);
    const columns = await execute<{ column_name: string; data_type: string }>(
      database.db,
      sql`select column_name, data_type from information_schema.columns
        where table_schema = ${MIGRATIONS_TABLE.migrationsSchema} and table_name = ${MIGRATIONS_TABLE.migrationsTable} order by ordinal_position`,
    );
    expect(columns.rows).toEqual([
      { column_name: 'id', data_type: 'integer' },
      { column_name: 'hash', data_type: 'text' },
      { column_name: 'created_at', data_type: 'bigint' },
    ]);
    const query = (q: string) => execute(database.db, sql.raw(q));
    expect(await schemaUpToDate(MIGRATIONS, query)).toBe(true);
  });
});

contract('drizzlePgliteClientCalls', () => {
  it('calls only query (identity type parsers) and transaction on the client it is given', async () => {
    const used = new Set<string>();
    const parsers: Array<Record<string, (v: string, oid: number) => unknown>> = [];
    const client = {
      query: async (_text: string, _params: unknown[], options?: { rowMode?: string; parsers?: Record<string, (v: string, oid: number) => unknown> }) => {
        if (options?.parsers) parsers.push(options.parsers);
        return { rows: [], fields: [], affectedRows: 0 };
      },
      transaction: async <T>(f: (tx: unknown) => Promise<T>) => f(recording),
    };
    const recording: object = new Proxy(client, {
      get(target, key, receiver) {
        if (typeof key === 'string') used.add(key);
        return Reflect.get(target, key, receiver);
      },
    });
    const db = drizzlePglite({ client: recording as never });
    await db.select().from(promptLogs).limit(1);
    await db.execute(sql`select 1`);
    await db.transaction(async (tx) => {
      await tx.execute(sql`select 2`);
      await tx.select({ id: promptLogs.id }).from(promptLogs);
    });
    expect([...used].sort()).toEqual(['query', 'transaction']);
    expect(parsers.length).toBeGreaterThan(0);
    for (const p of parsers) for (const [oid, f] of Object.entries(p)) expect(f('x', Number(oid))).toBe('x');
  });
});

contract('drizzleExecuteRows', () => {
  const TYPED = sql`select ${'2026-01-02T03:04:05Z'}::timestamptz as tz, '2026-01-02 03:04:05'::timestamp as ts, '2026-01-02'::date as d,
    interval '1 day' as i, array['2026-01-02T03:04:05Z'::timestamptz] as tza, array[1.5]::numeric[] as na, 7::bigint as big, 3::int as n, true as b`;

  it('gives { rows } with timestamps, dates and intervals as text, on this driver', async () => {
    const { rows } = await execute<Record<string, unknown>>(database.db, TYPED);
    expect(rows).toHaveLength(1);
    const r = rows[0]!;
    for (const k of ['tz', 'ts', 'd', 'i', 'tza', 'na']) expect(typeof r[k]).toBe('string');
    expect(r).toMatchObject({ n: 3, b: true });
    expect(Number(r.big)).toBe(7);
  });

  it('executePrepared gives the same rows as db.execute, run after run', async () => {
    const { rows: expected } = await execute(database.db, TYPED);
    for (let i = 0; i < 3; i++) expect((await executePrepared(database.db, TYPED)).rows).toEqual(expected);
  });

  it('in a transaction, executePrepared is db.execute; rawRows refuses', async () => {
    const { rows: expected } = await execute(database.db, TYPED);
    await database.db.transaction(async (tx) => {
      expect((await executePrepared(tx, TYPED)).rows).toEqual(expected);
      await expect(rawRows(tx, 'select 1', [])).rejects.toThrow(/not in a transaction/);
    });
  });

  onPostgres('on PostgreSQL, executePrepared names the statement on its connection', async () => {
    const one = await openDatabase({ databaseUrl: PG_URL!, dataDir: '/nonexistent', poolSize: 1 });
    try {
      const q = sql`select ${41}::int + 1 as n`;
      expect((await executePrepared(one.db, q)).rows).toEqual([{ n: 42 }]);
      const named = await execute<{ name: string }>(one.db, sql`select name from pg_prepared_statements where statement = 'select $1::int + 1 as n'`);
      expect(named.rows.map((r) => r.name)).toEqual([expect.stringMatching(/^atrium_q\d+$/)]);
    } finally {
      await one.close();
    }
  });
});

describe('public APIs the seam relies on', () => {
  it('db.$client is the client drizzle was given; a transaction has none', async () => {
    const client = (database.db as unknown as { $client: object }).$client;
    expect(client).toBeTruthy();
    expect(typeof (client as { query?: unknown }).query).toBe('function');
    await database.db.transaction(async (tx) => {
      expect((tx as unknown as { $client?: unknown }).$client).toBeUndefined();
    });
  });

  it('every internal listed has a contract test here', () => {
    expect([...tested].sort()).toEqual(Object.keys(INTERNALS).sort());
  });
});
