/**
 * Messages between the application thread and the PGlite worker (db/pglite-worker.ts,
 * db/pglite-thread.ts). Everything here crosses a thread by structured clone: SQL text, parameters,
 * rows, and errors reduced to their message and their own fields (SQLSTATE `code`, `detail`,
 * `constraint`…), which is all the application reads of a database error.
 */
import type { SharedBuffersSetting } from './pglite-memory.js';

export interface WorkerStart {
  /** the PGlite folder (seeded from the build's copy when empty); null for an in-memory database */
  dataDir: string | null;
  /** register pgvector's files (the extension is created later, on first use) */
  vector: boolean;
  /** the page cache (db/pglite-memory.ts) */
  sharedBuffers: SharedBuffersSetting;
}

export type Request =
  | { id: number; op: 'query'; sql: string; params: unknown[]; rowMode: 'object' | 'array'; rawTypes: number[]; tx: number | null }
  /** a statement prepared once by name on the thread (db/driver.ts, preparedOnThisThread); answered null when it must go as `query` */
  | { id: number; op: 'prepared'; sql: string; params: unknown[]; write: boolean; textTypes: boolean }
  | { id: number; op: 'begin' }
  | { id: number; op: 'commit' | 'rollback'; tx: number }
  | { id: number; op: 'dump' }
  | { id: number; op: 'close' };

export interface QueryResult {
  rows: unknown[];
  fields: Array<{ name: string; dataTypeID: number }>;
  affectedRows?: number;
}

export type Reply =
  | { type: 'ready' }
  | { type: 'failed'; error: SerializedError }
  | { type: 'reply'; id: number; ok: true; value: unknown }
  | { type: 'reply'; id: number; ok: false; error: SerializedError };

export interface SerializedError {
  message: string;
  name: string;
  props: Record<string, unknown>;
}

export function serializeError(err: unknown): SerializedError {
  if (!(err instanceof Error)) return { message: String(err), name: 'Error', props: {} };
  const props: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(err)) {
    if (v === undefined || typeof v === 'function') continue;
    // Only plain values cross (a `cause` or a result object may hold what cannot be cloned).
    if (v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') props[k] = v;
  }
  return { message: err.message, name: err.name, props };
}

export function deserializeError(e: SerializedError): Error {
  const err = new Error(e.message);
  err.name = e.name;
  return Object.assign(err, e.props);
}
