import type { SQL } from 'drizzle-orm';
import type { Executor } from './client.js';

/**
 * At most this many statement texts get a name (a chat turn's statements differ by batch size and
 * by the fragments they embed; the common shapes are a handful). Later texts run unnamed.
 */
const MAX_NAMED = 256;
const names = new Map<string, string>();

/** The parts of drizzle's database (and transaction) object `execute` uses, which its types keep internal. */
interface DrizzleInternals {
  dialect: { sqlToQuery(q: SQL): { sql: string; params: unknown[] } };
  session: {
    client: object;
    logger?: { logQuery(query: string, params: unknown[]): void };
    prepareQuery(q: { sql: string; params: unknown[] }, fields: undefined, name: string | undefined, arrayMode: boolean): { execute(): Promise<unknown> };
  };
}

/** The in-process PGlite's prepared-statement runner (db/raw.ts, pglitePrepared), by the client drizzle holds. */
type Runner = { query(text: string, params: readonly unknown[]): Promise<unknown[] | undefined> };
const pgliteRunners = new WeakMap<object, Runner>();

/** Run this PGlite's `executePrepared` statements through `runner` (its `query` is what tracing wraps). */
export function usePreparedStatements(client: object, runner: Runner): void {
  pgliteRunners.set(client, runner);
}

/**
 * `db.execute(query)` as a named prepared statement on PostgreSQL: node-postgres parses a name
 * once per connection and the server keeps its parsed (and, after five runs, planned) form, so a
 * statement run on every turn stops paying parse analysis and planning each time — for a turn's
 * statement 1 with its budget CTEs that was ~0.3 ms of ~0.9 (bench/budget-check.ts,
 * docs/DECISIONS.md). The name is a stable function of the text, so every connection agrees.
 * On the in-process PGlite (not in a transaction) the statement is prepared once by name too
 * (db/raw.ts, pglitePrepared); its thread's client ignores the name (the same call as `db.execute`).
 */
export async function executePrepared<Row>(db: Executor, query: SQL): Promise<{ rows: Row[] }> {
  const d = db as unknown as DrizzleInternals;
  const built = d.dialect.sqlToQuery(query);
  const runner = pgliteRunners.get(d.session.client);
  if (runner) {
    const rows = await runner.query(built.sql, built.params);
    if (rows) {
      d.session.logger?.logQuery(built.sql, built.params);
      return { rows: rows as Row[] };
    }
  }
  let name = names.get(built.sql);
  if (name === undefined && names.size < MAX_NAMED) {
    name = `atrium_q${names.size}`;
    names.set(built.sql, name);
  }
  return (await d.session.prepareQuery(built, undefined, name, false).execute()) as { rows: Row[] };
}
