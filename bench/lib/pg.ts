/** A throwaway PostgreSQL database per run: created at the start, dropped at the end. */
import pg from 'pg';

export const PG_ADMIN_URL = process.env.ATRIUM_BENCH_PG_URL || 'postgres://postgres@127.0.0.1:5432/postgres';

export interface ThrowawayDb {
  name: string;
  url: string;
  drop(): Promise<void>;
}

function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

/** Create `atrium_bench_<suffix>_<timestamp>`; null (with the reason) when PostgreSQL is not reachable. */
export async function createThrowawayDb(suffix: string): Promise<ThrowawayDb | { error: string }> {
  const name = `atrium_bench_${suffix}_${Date.now()}`;
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL, connectionTimeoutMillis: 3000 });
  try {
    await admin.connect();
    await admin.query(`create database "${name}"`);
  } catch (err) {
    return { error: `PostgreSQL at ${new URL(PG_ADMIN_URL).host} not usable: ${(err as Error).message}` };
  } finally {
    await admin.end().catch(() => {});
  }
  return {
    name,
    url: withDatabase(PG_ADMIN_URL, name),
    async drop() {
      const c = new pg.Client({ connectionString: PG_ADMIN_URL, connectionTimeoutMillis: 3000 });
      await c.connect();
      try {
        await c.query(`drop database if exists "${name}" with (force)`);
      } finally {
        await c.end();
      }
    },
  };
}

export function isDb(x: ThrowawayDb | { error: string }): x is ThrowawayDb {
  return 'url' in x;
}
