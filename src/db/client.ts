import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import type { ExtractTablesWithRelations } from 'drizzle-orm';
import type { PgDatabase, PgQueryResultHKT, PgTransaction } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { migrate as migratePg } from 'drizzle-orm/node-postgres/migrator';
import pg from 'pg';
import * as schema from './schema.js';

export type Schema = typeof schema;
/** The one query interface, whichever driver is underneath. */
export type Db = PgDatabase<PgQueryResultHKT, Schema>;
export type Tx = PgTransaction<PgQueryResultHKT, Schema, ExtractTablesWithRelations<Schema>>;
/** Repositories accept either the database or a transaction passed down by a service. */
export type Executor = Db | Tx;

export interface Database {
  readonly db: Db;
  readonly kind: 'pglite' | 'postgres';
  ping(): Promise<void>;
  close(): Promise<void>;
}

const MIGRATIONS = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');
/** Serialises migrations when several Atrium nodes start against one PostgreSQL. */
const MIGRATION_LOCK = 74_657_201;

/**
 * Open the database and bring its schema up to date.
 * `databaseUrl` null → PGlite in `dataDir/pglite`; 'memory://' → an in-memory PGlite (tests);
 * otherwise a node-postgres pool.
 */
export async function openDatabase(opts: {
  databaseUrl: string | null;
  dataDir: string;
  poolSize?: number;
}): Promise<Database> {
  if (opts.databaseUrl === null || opts.databaseUrl === 'memory://') {
    let dir: string | undefined;
    if (opts.databaseUrl === null) {
      dir = path.join(opts.dataDir, 'pglite');
      await mkdir(dir, { recursive: true });
    }
    const client = await PGlite.create(dir);
    const db = drizzlePglite({ client, schema }) as unknown as Db;
    try {
      await migratePglite(db as never, { migrationsFolder: MIGRATIONS });
    } catch (err) {
      await client.close();
      throw err;
    }
    return {
      db,
      kind: 'pglite',
      ping: async () => {
        await client.query('select 1');
      },
      close: () => client.close(),
    };
  }

  const pool = new pg.Pool({ connectionString: opts.databaseUrl, max: opts.poolSize ?? 10 });
  // An idle client losing its server must not crash the process; the next query reports it.
  pool.on('error', () => undefined);
  const lockClient = await pool.connect();
  try {
    await lockClient.query('select pg_advisory_lock($1)', [MIGRATION_LOCK]);
    await migratePg(drizzlePg({ client: lockClient as never }), { migrationsFolder: MIGRATIONS });
  } catch (err) {
    lockClient.release(true);
    await pool.end();
    throw err;
  }
  await lockClient.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK]);
  lockClient.release();
  const db = drizzlePg({ client: pool, schema }) as unknown as Db;
  return {
    db,
    kind: 'postgres',
    ping: async () => {
      await pool.query('select 1');
    },
    close: () => pool.end(),
  };
}
