import { Worker } from 'node:worker_threads';
import { workerEntry } from '../worker-entry.js';
import { pgliteDir, registerVector } from './files.js';
import type { SharedBuffersSetting } from './pglite-memory.js';
import { deserializeError, type QueryResult, type Reply, type Request, type WorkerStart } from './pglite-protocol.js';

type Parsers = Record<number, (value: string, typeId: number) => unknown>;
interface QueryOptions {
  rowMode?: 'object' | 'array';
  parsers?: Parsers;
}
type Pending = { resolve: (v: unknown) => void; reject: (e: unknown) => void };
type Call = Request extends infer R ? (R extends { id: number } ? Omit<R, 'id'> : never) : never;

/** The part of PGlite's query interface that drizzle (and db/client.ts) use. */
export interface PGliteQueries {
  query<T = Record<string, unknown>>(sql: string, params?: unknown[], options?: QueryOptions): Promise<QueryResult & { rows: T[] }>;
}

/**
 * The application thread's end of the embedded database (db/pglite-worker.ts runs PGlite): the
 * client drizzle is given in place of a PGlite instance — `query`, `transaction` and `close`, the
 * calls drizzle's PGlite driver makes (relied upon: db/driver.ts, INTERNALS). Values cross by
 * structured clone. Type parsers: drizzle hands PGlite identity parsers (timestamps, dates and
 * intervals stay strings); those, and only those, are passed on by type id — any other parser is
 * refused rather than silently dropped.
 */
export class PGliteThread implements PGliteQueries {
  private readonly worker: Worker;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private failure: Error | null = null;
  /** Settles when the database is open and migrated (rejects with the reason it could not be). */
  readonly ready: Promise<void>;
  /** whether pgvector's files were registered when the database started */
  readonly vector: boolean;

  /**
   * Start the embedded database of DATA_DIR on its thread: the folder seeded when empty, PGlite
   * opened, the schema migrated; `ready` tells when. Queries sent before then wait for it.
   */
  static start(dataDir: string, vectorExtension: 'auto' | 'on' | 'off', sharedBuffers: SharedBuffersSetting = 'auto'): PGliteThread {
    return new PGliteThread({ dataDir: pgliteDir(dataDir), vector: registerVector(dataDir, vectorExtension), sharedBuffers });
  }

  constructor(start: WorkerStart) {
    this.vector = start.vector;
    const entry = workerEntry('db/pglite-worker');
    this.worker = new Worker(entry.source, { eval: entry.eval, workerData: start });
    let opened: () => void;
    let failed: (e: Error) => void;
    this.ready = new Promise<void>((resolve, reject) => {
      opened = resolve;
      failed = reject;
    });
    this.ready.catch(() => undefined); // whoever awaits `ready` sees the failure; nobody else must crash on it
    this.worker.on('message', (m: Reply) => {
      if (m.type === 'ready') return opened();
      if (m.type === 'failed') return failed(deserializeError(m.error));
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      if (m.ok) p.resolve(m.value);
      else p.reject(deserializeError(m.error));
    });
    // A worker that dies takes every waiting call with it, and every later one fails at once.
    const die = (err: Error) => {
      this.failure ??= err;
      failed(err);
      for (const p of this.pending.values()) p.reject(err);
      this.pending.clear();
    };
    this.worker.on('error', die);
    this.worker.on('exit', (code) => die(new Error(`the embedded database's thread exited (code ${code})`)));
  }

  private call(req: Call): Promise<unknown> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ ...req, id } as Request);
    });
  }

  private run(tx: number | null, sql: string, params: unknown[] | undefined, options: QueryOptions | undefined): Promise<QueryResult> {
    return this.call({
      op: 'query',
      sql,
      params: params ?? [],
      rowMode: options?.rowMode ?? 'object',
      rawTypes: rawTypes(options?.parsers),
      tx,
    }) as Promise<QueryResult>;
  }

  query<T = Record<string, unknown>>(sql: string, params?: unknown[], options?: QueryOptions): Promise<QueryResult & { rows: T[] }> {
    return this.run(null, sql, params, options) as Promise<QueryResult & { rows: T[] }>;
  }

  /** BEGIN … COMMIT in the worker around `fn`; ROLLBACK when `fn` throws (its error is rethrown). */
  async transaction<T>(fn: (tx: PGliteQueries) => Promise<T>): Promise<T> {
    const id = (await this.call({ op: 'begin' })) as number;
    const tx: PGliteQueries = {
      query: <R>(sql: string, params?: unknown[], options?: QueryOptions) => this.run(id, sql, params, options) as Promise<QueryResult & { rows: R[] }>,
    };
    let result: T;
    try {
      result = await fn(tx);
    } catch (err) {
      await this.call({ op: 'rollback', tx: id }).catch(() => undefined);
      throw err;
    }
    await this.call({ op: 'commit', tx: id });
    return result;
  }

  /** A consistent copy of the database's folder (db/pglite-dump.ts), taken on its thread. */
  dumpDataDir(): Promise<Uint8Array> {
    return this.call({ op: 'dump' }) as Promise<Uint8Array>;
  }

  async close(): Promise<void> {
    if (!this.failure) await this.call({ op: 'close' }).catch(() => undefined);
    this.failure ??= new Error('the embedded database is closed');
    await this.worker.terminate();
  }
}

function rawTypes(parsers: Parsers | undefined): number[] {
  if (!parsers) return [];
  return Object.entries(parsers).map(([oid, parse]) => {
    if (parse('x', Number(oid)) !== 'x') throw new Error(`only identity type parsers cross to the database thread (type ${oid})`);
    return Number(oid);
  });
}
