import { writeFile } from 'node:fs/promises';
import type { ExtractTablesWithRelations } from 'drizzle-orm';
import type { PgDatabase, PgQueryResultHKT, PgTransaction } from 'drizzle-orm/pg-core';
import type { Config } from '../config.js';
import { MIGRATIONS, pgliteDir, registerVector, SEED_DIR, vectorMarker } from './files.js';
import type { SharedBuffersSetting } from './pglite-memory.js';
import { dumpPglite } from './pglite-dump.js';
import { openPglite } from './pglite-open.js';
import { PGliteThread } from './pglite-thread.js';
import { MIGRATIONS_TABLE, schemaUpToDate, statementLog, usePreparedStatements } from './driver.js';
import * as schema from './schema.js';
import { traceStatements } from '../observability/hooks.js';

export type Schema = typeof schema;
/** The one query interface, whichever driver is underneath. */
export type Db = PgDatabase<PgQueryResultHKT, Schema>;
export type Tx = PgTransaction<PgQueryResultHKT, Schema, ExtractTablesWithRelations<Schema>>;
/** Repositories accept either the database or a transaction passed down by a service. */
export type Executor = Db | Tx;

export interface Database {
  readonly db: Db;
  /**
   * The same database for bulk work (an upload's chunk batches, an index build's reads, a large
   * search's feature batches, the CSV exports' reads, upkeep): on the embedded database on its own
   * thread, statements that give way to other requests' (PGliteThread.bulk); elsewhere `db` itself.
   */
  readonly bulk: Db;
  /**
   * The embedded database on its own thread: settles once no statement has run for `quietMs`, or
   * after `atMostMs` (PGliteThread.lull), for work that can wait for a lull. Absent elsewhere.
   */
  lull?(quietMs: number, atMostMs: number): Promise<void>;
  readonly kind: 'pglite' | 'postgres';
  /**
   * Whether pgvector's `vector` type and distance operators can be used: on first call, creates
   * the extension where it is available (bundled with PGlite; on PostgreSQL when the server has
   * it and the role may create it), else false — the vector search then computes cosine on
   * `real[]` in plain SQL. Memoised. Deferred to first use because loading the extension costs
   * PGlite ~0.1–0.3 s, which an instance without an embedding model never pays.
   */
  vectorOps(): Promise<boolean>;
  ping(): Promise<void>;
  /** The embedded database on disk: a consistent copy of its folder (db/pglite-dump.ts; `npm run cli -- backup`). Absent on PostgreSQL. */
  dumpDataDir?(): Promise<Uint8Array>;
  close(): Promise<void>;
}

export { SEED_DIR };
/** Serialises migrations when several Atrium nodes start against one PostgreSQL. */
const MIGRATION_LOCK = 74_657_201;

/** openDatabase's options as the configuration states them. */
export function databaseOptions(config: Config): Parameters<typeof openDatabase>[0] {
  return {
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    poolSize: config.pgPoolSize,
    vectorExtension: config.vectorExtension,
    thread: config.embeddedDbThread,
    sharedBuffers: config.embeddedSharedBuffers,
  };
}

/**
 * Open the database and bring its schema up to date.
 * `databaseUrl` null → PGlite in `dataDir/pglite`; 'memory://' → an in-memory PGlite (tests);
 * otherwise a node-postgres pool.
 */
export async function openDatabase(opts: {
  databaseUrl: string | null;
  dataDir: string;
  poolSize?: number;
  /** 'off': never use the vector extension (the real[] search), e.g. to compare the two; 'on'/'auto' (default): see Config.vectorExtension */
  vectorExtension?: 'auto' | 'on' | 'off';
  /** the embedded database in `dataDir` on its own thread (db/pglite-worker.ts), or that thread already started; default false */
  thread?: boolean | PGliteThread;
  /** the embedded database's page cache (db/pglite-memory.ts); default 'auto' */
  sharedBuffers?: SharedBuffersSetting;
}): Promise<Database> {
  const setting = opts.vectorExtension ?? 'auto';
  const wantVector = setting !== 'off';
  // pgvector's files are registered with an on-disk embedded database only once it has used vector search (files.ts, vectorMarker).
  const onDisk = (registered: boolean): EmbeddedVector => ({ registered, marker: wantVector ? vectorMarker(opts.dataDir) : null });
  if (opts.databaseUrl === null && opts.thread) {
    // The thread may have been started already (main.ts starts it before anything else loads).
    const client = opts.thread instanceof PGliteThread ? opts.thread : PGliteThread.start(opts.dataDir, setting, opts.sharedBuffers);
    const { drizzle: drizzlePglite } = await import('drizzle-orm/pglite');
    try {
      await client.ready;
    } catch (err) {
      await client.close();
      throw err;
    }
    const db = drizzlePglite({ client: traceStatements(client, 'pglite') as never, schema, logger: statementLog(client) }) as unknown as Db;
    const bulk = drizzlePglite({ client: traceStatements(client.bulk, 'pglite') as never, schema, logger: statementLog(client) }) as unknown as Db;
    // A chat turn's statements are prepared once by name on the thread (db/driver.ts, executePrepared).
    usePreparedStatements(client);
    return {
      ...embedded(client, db, onDisk(client.vector)),
      bulk,
      lull: (quietMs, atMostMs) => client.lull(quietMs, atMostMs),
      dumpDataDir: () => client.dumpDataDir(),
    };
  }
  // Only the driver in use is loaded (each costs start-up time).
  if (opts.databaseUrl === null || opts.databaseUrl === 'memory://') {
    const inMemory = opts.databaseUrl === 'memory://';
    const register = inMemory ? wantVector : registerVector(opts.dataDir, setting);
    const [client, { drizzle: drizzlePglite }] = await Promise.all([
      openPglite(inMemory ? undefined : pgliteDir(opts.dataDir), register, opts.sharedBuffers),
      import('drizzle-orm/pglite'),
    ]);
    const db = drizzlePglite({ client: traceStatements(client, 'pglite'), schema, logger: statementLog(client) }) as unknown as Db;
    // A chat turn's statements are prepared once by name (db/driver.ts, executePrepared).
    usePreparedStatements(client);
    const opened = embedded(client, db, inMemory ? { registered: register, marker: null } : onDisk(register));
    return inMemory ? opened : { ...opened, dumpDataDir: () => dumpPglite(client) };
  }

  const [{ default: pg }, { drizzle: drizzlePg }, { migrate: migratePg }] = await Promise.all([
    import('pg'),
    import('drizzle-orm/node-postgres'),
    import('drizzle-orm/node-postgres/migrator'),
  ]);
  const pool = traceStatements(new pg.Pool({ connectionString: opts.databaseUrl, max: opts.poolSize ?? 10 }), 'pg-pool');
  // An idle client losing its server must not crash the process; the next query reports it.
  pool.on('error', () => undefined);
  const lockClient = await pool.connect();
  try {
    if (!(await schemaUpToDate(MIGRATIONS, (q) => lockClient.query(q)))) {
      await lockClient.query('select pg_advisory_lock($1)', [MIGRATION_LOCK]);
      await migratePg(drizzlePg({ client: lockClient as never }), { migrationsFolder: MIGRATIONS, ...MIGRATIONS_TABLE });
      await lockClient.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK]);
    }
  } catch (err) {
    lockClient.release(true);
    await pool.end();
    throw err;
  }
  lockClient.release();
  const db = drizzlePg({ client: pool, schema, logger: statementLog(pool) }) as unknown as Db;
  usePreparedStatements(pool, pg.types);
  return {
    db,
    bulk: db,
    kind: 'postgres',
    vectorOps: once(async () => wantVector && (await createVectorExtension((q) => pool.query(q)))),
    ping: async () => {
      await pool.query('select 1');
    },
    close: async () => {
      // pool.end() resolves once every client is told to end; each one's 'remove' comes when its socket has closed.
      let open = pool.totalCount;
      const closed = new Promise<void>((resolve) => {
        if (open === 0) resolve();
        pool.on('remove', () => {
          if (--open <= 0) resolve();
        });
      });
      await pool.end();
      await closed;
    },
  };
}

/** pgvector on the embedded database: whether its files were registered at start, and where to note that it is wanted. */
interface EmbeddedVector {
  registered: boolean;
  /** written on first use when not registered, so the next start registers it (null: in memory, or VECTOR_EXTENSION=off) */
  marker: string | null;
}

/** The embedded database (PGlite in-process, or its thread's client) as a Database. */
function embedded(client: { query(q: string): Promise<{ rows: unknown[] }>; close(): Promise<void> }, db: Db, vector: EmbeddedVector): Database {
  return {
    db,
    bulk: db,
    kind: 'pglite',
    vectorOps: once(async () => {
      if (vector.registered) return createVectorExtension((q) => client.query(q));
      // Not registered at this start: the real[] search until the next one, which registers it.
      if (vector.marker)
        await writeFile(vector.marker, 'Vector search is used with this embedded database: pgvector is registered at each start.\n').catch(() => undefined);
      return false;
    }),
    ping: async () => {
      await client.query('select 1');
    },
    close: () => client.close(),
  };
}

function once(f: () => Promise<boolean>): () => Promise<boolean> {
  let p: Promise<boolean> | undefined;
  return () => (p ??= f());
}

/**
 * Create the `vector` extension if the server offers it; true when it is usable. A server without
 * it (or a role that may not create it) is not an error: the search falls back to real[] cosine.
 * Nodes racing to create it: the loser's error is followed by a second look.
 */
async function createVectorExtension(query: (q: string) => Promise<{ rows: unknown[] }>): Promise<boolean> {
  const installed = async () => (await query(`select 1 from pg_extension where extname = 'vector'`)).rows.length > 0;
  try {
    if (await installed()) return true;
    if ((await query(`select 1 from pg_available_extensions where name = 'vector'`)).rows.length === 0) return false;
    await query('create extension if not exists vector');
    return true;
  } catch {
    return installed().catch(() => false);
  }
}
