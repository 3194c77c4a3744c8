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
 */
export async function rawRows<Row>(db: Executor, text: string, params: unknown[]): Promise<Row[]> {
  return (await (db as unknown as DrizzleSession).session.client.query(text, params)).rows as Row[];
}
