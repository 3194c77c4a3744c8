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

/** `query` and `transaction`, what drizzle's PGlite driver calls. */
export interface PGliteClient extends PGliteQueries {
  transaction<T>(fn: (tx: PGliteQueries) => Promise<T>): Promise<T>;
}

/**
 * After another statement ends, how long a bulk statement still waits for the next one (a
 * request's next statement follows its last within a few ms), and the longest it waits in all
 * (bulk work is slowed under a steady load, never stopped).
 */
const BULK_GRACE_MS = 4;
const BULK_MAX_WAIT_MS = 25;

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
  /** bulk statements not yet sent, oldest first: when each was asked for, and how to send it */
  private readonly bulkQueue: Array<{ since: number; send: () => void }> = [];
  private bulkRunning = false;
  /** calls in flight other than bulk statements, and when the last of them ended */
  private others = 0;
  private otherEnded = 0;
  /** when the last bulk work ended */
  private bulkEnded = 0;
  private bulkTimer: NodeJS.Timeout | null = null;
  /** lulls waited for (`lull`): each settles it */
  private readonly lulls = new Set<() => void>();
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
      this.failBulk();
    };
    this.worker.on('error', die);
    this.worker.on('exit', (code) => die(new Error(`the embedded database's thread exited (code ${code})`)));
  }

  private call(req: Call, bulk = false): Promise<unknown> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    if (!bulk) this.others++;
    const sent = new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ ...req, id } as Request);
    });
    if (bulk) return sent;
    const ended = () => {
      this.others--;
      this.otherEnded = performance.now();
      this.pumpBulk();
    };
    sent.then(ended, ended);
    return sent;
  }

  /**
   * This client for bulk work (an upload's chunk batches, an index build's reads, a large
   * search's feature batches, the CSV exports' reads, upkeep): its statements outside a
   * transaction give way to everyone else's. PGlite has one connection and a statement cannot be interrupted, so a request with
   * several statements in a row would otherwise wait behind a bulk one at each of them; a bulk
   * statement is sent only when no other call is in flight and none ended in the last
   * BULK_GRACE_MS, or once it has waited BULK_MAX_WAIT_MS; one at a time, in order. A
   * transaction waits so too, then holds back the other bulk work until it ends.
   */
  readonly bulk: PGliteClient = {
    query: <T>(sql: string, params?: unknown[], options?: QueryOptions) =>
      this.whenBulkMayRun(() => this.run(null, sql, params, options, true) as Promise<QueryResult & { rows: T[] }>),
    // BEGIN waits like a statement; until COMMIT no other bulk work is sent (its statements are the transaction's own)
    transaction: (fn) => this.whenBulkMayRun(() => this.transaction(fn)),
  };

  /** `work` once bulk work may run (pumpBulk), the next bulk work when it has settled. */
  private whenBulkMayRun<T>(work: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.bulkQueue.push({
        since: performance.now(),
        send: () => {
          this.bulkRunning = true;
          const done = () => {
            this.bulkRunning = false;
            this.bulkEnded = performance.now();
            this.pumpBulk();
          };
          let running: Promise<T>;
          try {
            running = work();
          } catch (err) {
            running = Promise.reject(err); // e.g. a type parser that cannot cross: this call fails, the queue goes on
          }
          running.then(done, done);
          running.then(resolve, reject);
        },
      });
      this.pumpBulk();
    });
  }

  private pumpBulk(): void {
    if (this.bulkRunning || this.bulkQueue.length === 0) return;
    if (this.bulkTimer) clearTimeout(this.bulkTimer);
    this.bulkTimer = null;
    const now = performance.now();
    const left = BULK_MAX_WAIT_MS - (now - this.bulkQueue[0]!.since);
    // while others are in flight, an ending call pumps again and the timer only bounds the wait
    const wait = left <= 0 ? 0 : this.others > 0 ? left : Math.min(BULK_GRACE_MS - (now - this.otherEnded), left);
    if (wait > 0) this.bulkTimer = setTimeout(() => this.retryBulk(), wait).unref();
    else this.bulkQueue.shift()!.send();
  }

  /**
   * Settles once no call, bulk or other, has been in flight or waiting for `quietMs`, or after
   * `atMostMs`, or once the client has failed or closed: for work that can wait for a lull
   * (upkeep), so that even its one statement seldom holds up a request.
   */
  lull(quietMs: number, atMostMs: number): Promise<void> {
    const until = performance.now() + atMostMs;
    return new Promise<void>((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const settle = () => {
        clearTimeout(timer);
        this.lulls.delete(settle);
        resolve();
      };
      const check = () => {
        const now = performance.now();
        const busy = this.others > 0 || this.bulkRunning || this.bulkQueue.length > 0;
        const quiet = busy ? 0 : now - Math.max(this.otherEnded, this.bulkEnded);
        if (this.failure || quiet >= quietMs || now >= until) return settle();
        timer = setTimeout(check, Math.min(quietMs - quiet, until - now)).unref();
      };
      this.lulls.add(settle);
      check();
    });
  }

  /** Once the client has failed or closed: every waiting bulk statement is sent, to fail at once; every lull ends. */
  private failBulk(): void {
    for (const settle of [...this.lulls]) settle();
    if (this.bulkTimer) clearTimeout(this.bulkTimer);
    this.bulkTimer = null;
    for (const b of this.bulkQueue.splice(0)) b.send();
  }

  private retryBulk(): void {
    this.bulkTimer = null;
    this.pumpBulk();
  }

  private run(tx: number | null, sql: string, params: unknown[] | undefined, options: QueryOptions | undefined, bulk = false): Promise<QueryResult> {
    return this.call(
      {
        op: 'query',
        sql,
        params: params ?? [],
        rowMode: options?.rowMode ?? 'object',
        rawTypes: rawTypes(options?.parsers),
        tx,
      },
      bulk,
    ) as Promise<QueryResult>;
  }

  query<T = Record<string, unknown>>(sql: string, params?: unknown[], options?: QueryOptions): Promise<QueryResult & { rows: T[] }> {
    return this.run(null, sql, params, options) as Promise<QueryResult & { rows: T[] }>;
  }

  /**
   * `sql` run on the thread as a statement prepared once by name (db/driver.ts, PreparedOnThread):
   * its rows, or null when it must be sent as `query` (a parameter that is not plain text).
   */
  prepared(sql: string, params: unknown[], write: boolean, textTypes: boolean): Promise<unknown[] | null> {
    return this.call({ op: 'prepared', sql, params, write, textTypes }) as Promise<unknown[] | null>;
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
    this.failBulk();
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
