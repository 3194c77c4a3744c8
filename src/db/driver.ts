/**
 * The one seam between the application and its database packages: every statement the
 * application runs goes through here (`execute`, `executePrepared`, `rawRows`), and this is the
 * only file that relies on what drizzle-orm or PGlite do not offer as public API. Each such
 * internal is listed in INTERNALS, with the version it was checked against; a contract test of each
 * is in test/db/internals.test.ts, and test/db/seam.test.ts refuses their names in any other file
 * of src/. drizzle-orm and PGlite are pinned exactly in package.json while any is relied upon.
 * Public APIs used instead of internals: drizzle's `db.$client` (the driver client it was given),
 * `PgDialect.sqlToQuery` (a query's text and parameters), the migrator's `migrationsSchema` and
 * `migrationsTable`, node-postgres' `{ name, text, values, types }` query config.
 */
import type { PGlite } from '@electric-sql/pglite';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { SQL } from 'drizzle-orm';
import type { PgDialect } from 'drizzle-orm/pg-core';
import type { Executor } from './client.js';
import { traceStatements } from '../observability/hooks.js';

/** Something relied upon that its package does not document as public behaviour. */
export interface Internal {
  readonly package: 'drizzle-orm' | '@electric-sql/pglite';
  /** the version it was checked against (package.json pins it exactly) */
  readonly version: string;
  /** how it appears in source: refused outside this file (test/db/seam.test.ts); null when only relied upon, never named */
  readonly pattern: RegExp | null;
}

const PGLITE = { package: '@electric-sql/pglite', version: '0.5.14' } as const;
const DRIZZLE = { package: 'drizzle-orm', version: '0.45.4' } as const;

export const INTERNALS = {
  /** PGlite `_checkReady()`: resolves once the database is open, rejects once it is closed (as `query` does). */
  pgliteCheckReady: { ...PGLITE, pattern: /_checkReady/ },
  /** PGlite `_runExclusiveTransaction(f)`: the lock `transaction()` holds to its end; `query` takes it first, so no statement runs inside another caller's transaction. */
  pgliteTransactionLock: { ...PGLITE, pattern: /_runExclusiveTransaction/ },
  /** PGlite `_runExclusiveQuery(f)`: the lock one statement holds, taken inside the transaction lock; runs its callers one at a time. */
  pgliteQueryLock: { ...PGLITE, pattern: /_runExclusiveQuery/ },
  /** PGlite `execProtocol(message, { syncToFs, throwOnError })`: runs several protocol messages as one call, takes no lock, rejects with the server's error (its SQLSTATE `code`). */
  pgliteExecProtocol: { ...PGLITE, pattern: /execProtocol/ },
  /** PGlite `protocol.serialize` (parse, bind, describe, execute, close, sync): the frontend messages execProtocol runs. */
  pgliteSerialize: { ...PGLITE, pattern: /protocol\.serialize|\bserialize\.(parse|bind|sync)\b/ },
  /** PGlite `parse.parseResults(messages, pg.parsers)`: the rows `query` returns, by the instance's type `parsers` (int8 as a number, timestamptz as a Date). */
  pgliteParseResults: { ...PGLITE, pattern: /parseResults/ },
  /** drizzle's migrator records each applied migration in `drizzle.__drizzle_migrations` with its journal time in `created_at` (bigint), and applies those newer than the greatest. */
  drizzleMigrationsTable: { ...DRIZZLE, pattern: /__drizzle_migrations/ },
  /** drizzle's PGlite driver calls its client's `query(text, params, { rowMode, parsers })` (identity parsers only) and `transaction(f)`, nothing else: db/pglite-thread.ts implements just that. */
  drizzlePgliteClientCalls: { ...DRIZZLE, pattern: null },
  /** `db.execute` rows: `{ rows }` on both drivers (typed unknown), with timestamp, timestamptz, date and interval (and their arrays, and numeric[]) left as text; executePrepared gives its prepared statements the same (TEXT_TYPES), on either driver. */
  drizzleExecuteRows: { ...DRIZZLE, pattern: /\b(db|tx|t)\.execute\(/ },
} as const satisfies Record<string, Internal>;

/** Public APIs that stay in this file too, so that one file holds every statement sent past drizzle's query builder. */
export const SEAM_ONLY: readonly RegExp[] = [/\$client\b/, /sqlToQuery|PgDialect/, /session\.(client|prepareQuery|logger)/, /prepareQuery/];

// ---- statements ------------------------------------------------------------------------------

/** `db.execute(query)` (or a transaction's) with the rows' type (INTERNALS.drizzleExecuteRows). */
export async function execute<Row = Record<string, unknown>>(db: Executor, query: SQL): Promise<{ rows: Row[] }> {
  return (await db.execute(query)) as unknown as { rows: Row[] };
}

type DriverClient = { query(text: string, params?: unknown[]): Promise<{ rows: unknown[] }> };

/** The driver client drizzle was given (`db.$client`, public); a transaction has none. */
const clientOf = (db: Executor): object | undefined => (db as { $client?: object }).$client;

/**
 * A statement of fixed text sent straight to the driver, past drizzle's query builder, its cache
 * wrapper and its row mapping: on PGlite those cost ~0.3 ms a statement, as much as running a
 * primary-key lookup (docs/DECISIONS.md, "In-memory lexical index"). For hot paths only: rows
 * come as the driver gives them (column names as selected, bigint possibly as a string). On the
 * database only, not in a transaction (drizzle keeps a transaction's client to itself).
 *
 * On PGlite, in this process or on its thread, the statement is prepared once by name and each run
 * is one call into PostgreSQL (pglitePrepared); on PostgreSQL it is the driver's `query`.
 */
export async function rawRows<Row>(db: Executor, text: string, params: unknown[]): Promise<Row[]> {
  const client = clientOf(db) as DriverClient | undefined;
  if (!client) throw new Error('rawRows runs on the database, not in a transaction');
  const prepared = rawRunner(client);
  const rows = prepared && (await prepared.query(text, params));
  return rows ? (rows as Row[]) : ((await client.query(text, params)).rows as Row[]);
}

/** Runs a text as a statement prepared by name: its rows, or undefined when it must be sent as `query`. */
type Runner = { query(text: string, params: unknown[]): Promise<unknown[] | undefined> };
const rawRunners = new WeakMap<object, Runner | null>();

/** rawRows' runner for this client (pgliteRunner, rows as PGlite's parsers give them), made once. */
function rawRunner(client: object): Runner | null {
  let runner = rawRunners.get(client);
  if (runner === undefined) rawRunners.set(client, (runner = pgliteRunner(client, false, false)));
  return runner;
}

/**
 * Statements prepared by name on PGlite, in this process (pglitePrepared) or on its thread
 * (PreparedOnThread), traced as the client's `query` is; null for any other client. `write`: as
 * pglitePrepared's; `textTypes`: rows typed as executePrepared's (TEXT_PARSERS).
 */
function pgliteRunner(client: object, write: boolean, textTypes: boolean): Runner | null {
  const runner: Runner | null = isPglite(client)
    ? { query: (text, params) => pglitePrepared(client, text, params, write, textTypes) }
    : isThread(client)
      ? { query: async (text, params) => (await client.prepared(text, params, write, textTypes)) ?? undefined }
      : null;
  return runner && traceStatements(runner, 'pglite');
}

/** drizzle's logger (its public `logger` option), one per database client: what `watchStatements` sees. */
class StatementLog {
  watcher: ((text: string) => void) | null = null;
  logQuery(text: string): void {
    this.watcher?.(text);
  }
}
const logs = new WeakMap<object, StatementLog>();

/** The logger to give drizzle for this driver client (db/client.ts), so that every statement on it can be watched. */
export function statementLog(client: object): StatementLog {
  let log = logs.get(client);
  if (!log) logs.set(client, (log = new StatementLog()));
  return log;
}

/** Call `watcher` with the text of each statement the database runs, drizzle's and executePrepared's (null: stop). Tests count a turn's statements so. */
export function watchStatements(db: Executor, watcher: ((text: string) => void) | null): void {
  const client = clientOf(db);
  if (!client) throw new Error('watchStatements watches the database, not a transaction');
  statementLog(client).watcher = watcher;
}

/** Runs a built statement prepared by name, or answers undefined (then `db.execute` runs it). */
type Prepared = (text: string, params: unknown[]) => Promise<unknown[] | undefined>;
const preparedFor = new WeakMap<object, Prepared>();
let dialect: PgDialect | undefined;

/**
 * `db.execute(query)` as a named prepared statement. On PostgreSQL node-postgres parses a name
 * once per connection and the server keeps its parsed (and, after five runs, planned) form, so a
 * statement run on every turn stops paying parse analysis and planning each time — for a turn's
 * statement 1 with its budget CTEs that was ~0.3 ms of ~0.9 (bench/budget-check.ts,
 * docs/DECISIONS.md). On PGlite, in this process or on its thread, the statement is prepared
 * once by name too (pglitePrepared). In a transaction it is `db.execute`.
 */
export async function executePrepared<Row>(db: Executor, query: SQL): Promise<{ rows: Row[] }> {
  const client = clientOf(db);
  const prepared = client && preparedFor.get(client);
  if (prepared) {
    dialect ??= new (await import('drizzle-orm/pg-core')).PgDialect();
    const built = dialect.sqlToQuery(query);
    const rows = await prepared(built.sql, built.params);
    if (rows) {
      logs.get(client)?.logQuery(built.sql);
      return { rows: rows as Row[] };
    }
  }
  return execute<Row>(db, query);
}

/** At most this many statement texts get a name on PostgreSQL (a turn's statements differ by batch size; the common shapes are a handful). Later texts run unnamed. */
const MAX_NAMED = 256;
/** The types drizzle's node-postgres driver leaves as text (INTERNALS.drizzleExecuteRows): timestamp, timestamptz, date, interval, their arrays, numeric[]. */
const TEXT_TYPES = new Set([1114, 1184, 1082, 1186, 1115, 1185, 1182, 1187, 1231]);
const asText = (v: string) => v;
const TEXT_PARSERS = Object.fromEntries([...TEXT_TYPES].map((oid) => [oid, asText]));
type PgTypes = { getTypeParser(oid: number, format?: string): (value: string) => unknown };
type PgPool = { query(config: { name?: string; text: string; values: unknown[]; types: PgTypes }): Promise<{ rows: unknown[] }> };

/**
 * Let executePrepared name the statements of this database's client: a node-postgres pool (with
 * node-postgres' `types`), or PGlite in this process or on its thread (its runner traced as its
 * `query` is).
 */
export function usePreparedStatements(client: object, pgTypes?: PgTypes): void {
  const runner = pgliteRunner(client, true, true);
  if (runner) {
    preparedFor.set(client, (text, params) => runner.query(text, params));
    return;
  }
  if (!pgTypes) return;
  const pool = client as PgPool;
  const names = new Map<string, string>();
  const types: PgTypes = { getTypeParser: (oid, format) => (TEXT_TYPES.has(oid) ? asText : pgTypes.getTypeParser(oid, format)) };
  preparedFor.set(client, async (text, values) => {
    let name = names.get(text);
    if (name === undefined && names.size < MAX_NAMED) names.set(text, (name = `atrium_q${names.size}`));
    return (await pool.query({ ...(name === undefined ? {} : { name }), text, values, types })).rows;
  });
}

// ---- migrations ------------------------------------------------------------------------------

/** Where drizzle's migrator records applied migrations, stated (its defaults) so both migrators and schemaUpToDate agree. */
export const MIGRATIONS_TABLE = { migrationsSchema: 'drizzle', migrationsTable: '__drizzle_migrations' } as const;

/**
 * Whether the database already has the newest migration of this build: one query instead of the
 * migrator's (which reads and hashes every migration file and opens a transaction), so a restart
 * of an up-to-date instance skips it. The migrator's own comparison (INTERNALS.drizzleMigrationsTable).
 * Any doubt (no table yet, an unreadable journal) answers false and the migrator decides.
 */
export async function schemaUpToDate(migrationsFolder: string, query: (q: string) => Promise<{ rows: unknown[] }>): Promise<boolean> {
  try {
    const journal = JSON.parse(await readFile(path.join(migrationsFolder, 'meta', '_journal.json'), 'utf8')) as { entries: Array<{ when: number }> };
    const newest = Math.max(...journal.entries.map((e) => e.when));
    const { rows } = await query(`select max(created_at) as last from ${MIGRATIONS_TABLE.migrationsSchema}.${MIGRATIONS_TABLE.migrationsTable}`);
    const last = (rows[0] as { last: unknown } | undefined)?.last;
    return last !== null && last !== undefined && Number(last) >= newest;
  } catch {
    return false;
  }
}

// ---- PGlite: statements prepared at the protocol level ---------------------------------------

/** PGlite's locks and protocol entry point (INTERNALS.pglite*). */
interface PgliteInternals {
  execProtocol(message: Uint8Array, options: { syncToFs?: boolean; throwOnError?: boolean }): Promise<{ messages: unknown[] }>;
  _checkReady(): Promise<void>;
  _runExclusiveTransaction<T>(f: () => Promise<T>): Promise<T>;
  _runExclusiveQuery<T>(f: () => Promise<T>): Promise<T>;
  parsers: Record<number, (x: string, typeId?: number) => unknown>;
}

function isPglite(client: unknown): client is PGlite & PgliteInternals {
  const c = client as Partial<PgliteInternals>;
  return (
    typeof c.execProtocol === 'function' &&
    typeof c._checkReady === 'function' &&
    typeof c._runExclusiveTransaction === 'function' &&
    typeof c._runExclusiveQuery === 'function'
  );
}

/**
 * The embedded database's thread (db/pglite-thread.ts): `prepared` runs preparedOnThisThread on
 * its side, so that a statement crosses the thread once and is not parsed and planned each run.
 */
export interface PreparedOnThread {
  prepared(text: string, params: unknown[], write: boolean, textTypes: boolean): Promise<unknown[] | null>;
}

const isThread = (client: unknown): client is PreparedOnThread => typeof (client as Partial<PreparedOnThread>).prepared === 'function';

/**
 * The database thread's side of PreparedOnThread.prepared (db/pglite-worker.ts): pglitePrepared on
 * its PGlite, rows typed as executePrepared's (`textTypes`) or as rawRows'; null when the
 * statement must be sent as `query` instead.
 */
export async function preparedOnThisThread(pg: PGlite, text: string, params: unknown[], write: boolean, textTypes: boolean): Promise<unknown[] | null> {
  if (!isPglite(pg)) return null;
  return (await pglitePrepared(pg, text, params, write, textTypes)) ?? null;
}

/**
 * At most this many texts hold a prepared statement per database; a new one beyond closes the
 * least recently used (a turn's statement text differs with its batch's size, so texts come and go).
 */
export const MAX_PREPARED = 32;
/**
 * A statement is prepared anew once its name is this old. PostgreSQL keeps a prepared statement's
 * generic plan until an ANALYZE of its tables invalidates it, and on PGlite ANALYZE runs only in
 * upkeep's lulls (db/upkeep.ts), which a steady load postpones by minutes: a plan made while the
 * tables held a few rows (sequential scans) then served them at thousands — a follow-up's
 * statement 1 grew by ~2.5 ms per earlier turn of its thread at 3,000 threads (docs/DECISIONS.md,
 * "Prepared statements are made anew"). A new one is planned with the tables' current sizes.
 */
export const REPREPARE_AFTER_MS = 15_000;
const preparedBy = new WeakMap<object, Map<string, { name: string; at: number }>>();
/** Statement names are never reused, in any database (one prepared again after a DEALLOCATE gets a new one). */
let nextName = 0;
type PgliteModule = typeof import('@electric-sql/pglite');
/** PGlite's protocol serializer and result parser, loaded with the first prepared statement (then no await: see pglitePrepared). */
let pgliteModule: PgliteModule | undefined;

/** A parameter sent as text as PGlite.query would send it (it serializes by type: arrays, JSON and bytes are not plain text). */
const isPlain = (v: unknown): boolean => v === null || v === undefined || typeof v !== 'object' || v instanceof Date;

/**
 * Run `text` on PGlite as a named prepared statement: Parse once (with the first run), then
 * Bind + Describe + Execute + Sync as one message — one pass through PostgreSQL's main loop, no
 * parse analysis and, once PostgreSQL settles on a generic plan, no planning (whose relation-size
 * probes are file-system calls under PGlite). `PGlite.query` sends the same statement as six
 * separate protocol calls, parsed and planned each time (~0.3 ms of a 0.6 ms lookup here,
 * docs/DECISIONS.md, "Both statements prepared once on PGlite"). It takes the same two locks as
 * `PGlite.query`, in the same order, so it never runs inside another caller's transaction, and
 * awaits nothing else before them, so a read issued before `close()` runs before it. Parameters
 * are sent as text (the statement casts them); rows are parsed by PGlite's own type parsers, as
 * `query` returns them, or with `textTypes` TEXT_PARSERS over them (executePrepared's: as drizzle's). Undefined (the caller falls back to `query`): a
 * parameter that is not plain text, a number, a boolean or a Date. `write`: the statement writes
 * (a chat turn's, executePrepared), so its changes are written back to the file system before it
 * resolves, as `PGlite.query` does.
 */
async function pglitePrepared(pg: PgliteInternals, text: string, params: readonly unknown[], write = false, textTypes = false): Promise<unknown[] | undefined> {
  let names = preparedBy.get(pg);
  if (!names) preparedBy.set(pg, (names = new Map()));
  if (!params.every(isPlain)) return undefined;
  const mod = (pgliteModule ??= await import('@electric-sql/pglite'));
  const s = mod.protocol.serialize;
  const values = params.map((v) => (v === null || v === undefined ? null : v instanceof Date ? v.toISOString() : String(v)));
  await pg._checkReady();
  return pg._runExclusiveTransaction(() =>
    pg._runExclusiveQuery(async () => {
      await pg._checkReady(); // closed while this waited for the locks: PGlite's own error
      const run = async (): Promise<unknown[]> => {
        // looked up under the lock: two first runs of one text must not both Parse it
        const known = names.get(text);
        const now = performance.now();
        let name = known && now - known.at < REPREPARE_AFTER_MS ? known.name : undefined;
        names.delete(text); // (re)inserted below: the map's order is least recently used first
        if (name === undefined) {
          // Parsed on its own, so a failed first run (a bad parameter) cannot leave it parsed but
          // unrecorded; closed in the same message: its own old name, and at the limit the least recently used
          const closing = known ? [known.name] : [];
          if (!known && names.size >= MAX_PREPARED) {
            const [lruText, lru] = names.entries().next().value!;
            names.delete(lruText);
            closing.push(lru.name);
          }
          const fresh = `atrium_raw${nextName++}`;
          const close = closing.map((n) => s.close({ type: 'S', name: n }));
          await pg.execProtocol(concat([...close, s.parse({ name: fresh, text }), s.sync()]), { syncToFs: false, throwOnError: true });
          names.set(text, { name: fresh, at: now });
          name = fresh;
        } else names.set(text, known!);
        const message = concat([s.bind({ statement: name, values }), s.describe({ type: 'P' }), s.execute({}), s.sync()]);
        // a read-only statement has nothing to write back to the file system; a write (`write`) is written back before it resolves, as PGlite.query does
        const { messages } = await pg.execProtocol(message, { syncToFs: write, throwOnError: true });
        return mod.parse.parseResults(messages as never, (textTypes ? textParsersOver(pg) : pg.parsers) as never)[0]?.rows ?? [];
      };
      try {
        return await run();
      } catch (err) {
        // the statement is gone (DEALLOCATE or DISCARD by someone): prepared again, once
        if ((err as { code?: unknown }).code !== '26000') throw err;
        names.delete(text);
        return run();
      }
    }),
  );
}

const overParsers = new WeakMap<object, object>();
/**
 * TEXT_PARSERS over PGlite's own, made once per database: PGlite's `parseResults` given them as an
 * option spreads its ~320 type parsers into a new object on every call (~0.14 ms, the most costly
 * step of a turn's statement on the database thread after PostgreSQL itself). PGlite's own stay
 * the prototype, so the array types it adds to them in place later are found too.
 */
function textParsersOver(pg: PgliteInternals): object {
  let over = overParsers.get(pg.parsers);
  if (!over) overParsers.set(pg.parsers, (over = Object.assign(Object.create(pg.parsers) as object, TEXT_PARSERS)));
  return over;
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
