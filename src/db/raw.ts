import type { PGlite } from '@electric-sql/pglite';
import type { Executor } from './client.js';

/** The driver client under drizzle's database or transaction object (PGlite, its thread's proxy, or node-postgres). */
interface DrizzleSession {
  session: { client: { query(text: string, params?: unknown[]): Promise<{ rows: unknown[] }> } };
}

/**
 * A statement of fixed text sent straight to the driver, past drizzle's query builder, its cache
 * wrapper and its row mapping: on PGlite those cost ~0.3 ms a statement, as much as running a
 * primary-key lookup (docs/DECISIONS.md, "In-memory lexical index"). For hot paths only: rows
 * come as the driver gives them (column names as selected, bigint possibly as a string).
 *
 * On PGlite in this process (not in a transaction) the statement is prepared once by name and
 * each run is one call into PostgreSQL (pglitePrepared); elsewhere it is the driver's `query`.
 */
export async function rawRows<Row>(db: Executor, text: string, params: unknown[]): Promise<Row[]> {
  const client = (db as unknown as DrizzleSession).session.client;
  if (isPglite(client)) {
    const rows = await pglitePrepared(client, text, params);
    if (rows) return rows as Row[];
  }
  return (await client.query(text, params)).rows as Row[];
}

// ---- PGlite: statements prepared at the protocol level -------------------------------------

/** PGlite's own locks and protocol entry point (public methods its TypeScript types leave out or keep internal). */
interface PgliteInternals {
  execProtocol(message: Uint8Array, options: { syncToFs?: boolean; throwOnError?: boolean }): Promise<{ messages: unknown[] }>;
  _checkReady(): Promise<void>;
  _runExclusiveTransaction<T>(f: () => Promise<T>): Promise<T>;
  _runExclusiveQuery<T>(f: () => Promise<T>): Promise<T>;
  parsers: Record<number, (x: string, typeId?: number) => unknown>;
}

export function isPglite(client: unknown): client is PGlite & PgliteInternals {
  const c = client as Partial<PgliteInternals>;
  return (
    typeof c.execProtocol === 'function' &&
    typeof c._checkReady === 'function' &&
    typeof c._runExclusiveTransaction === 'function' &&
    typeof c._runExclusiveQuery === 'function'
  );
}

/** At most this many texts get a prepared statement per database (rawRows serves a few fixed texts). */
const MAX_PREPARED = 32;
const preparedBy = new WeakMap<object, Map<string, string>>();
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
 * `query` returns them. Undefined (the caller falls back to `query`): no name left, or a
 * parameter that is not plain text, a number, a boolean or a Date. `write`: the statement writes
 * (a chat turn's, db/prepared.ts), so its changes are written back to the file system before it
 * resolves, as `PGlite.query` does.
 */
export async function pglitePrepared(pg: PgliteInternals, text: string, params: readonly unknown[], write = false): Promise<unknown[] | undefined> {
  let names = preparedBy.get(pg);
  if (!names) preparedBy.set(pg, (names = new Map()));
  if ((!names.has(text) && names.size >= MAX_PREPARED) || !params.every(isPlain)) return undefined;
  const mod = (pgliteModule ??= await import('@electric-sql/pglite'));
  const s = mod.protocol.serialize;
  const values = params.map((v) => (v === null || v === undefined ? null : v instanceof Date ? v.toISOString() : String(v)));
  await pg._checkReady();
  return pg._runExclusiveTransaction(() =>
    pg._runExclusiveQuery(async () => {
      await pg._checkReady(); // closed while this waited for the locks: PGlite's own error
      const run = async (): Promise<unknown[]> => {
        // looked up under the lock: two first runs of one text must not both Parse it
        let name = names.get(text);
        if (name === undefined) {
          // on its own, so a failed first run (a bad parameter) cannot leave it parsed but unrecorded
          const fresh = `atrium_raw${nextName++}`;
          await pg.execProtocol(concat([s.parse({ name: fresh, text }), s.sync()]), { syncToFs: false, throwOnError: true });
          names.set(text, (name = fresh));
        }
        const message = concat([s.bind({ statement: name, values }), s.describe({ type: 'P' }), s.execute({}), s.sync()]);
        // a read-only statement has nothing to write back to the file system; a write (`write`) is written back before it resolves, as PGlite.query does
        const { messages } = await pg.execProtocol(message, { syncToFs: write, throwOnError: true });
        return mod.parse.parseResults(messages as never, pg.parsers as never)[0]?.rows ?? [];
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

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
