import { readFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * Whether the database already has the newest migration of this build: one query instead of the
 * migrator's (which reads and hashes every migration file and opens a transaction), so a restart
 * of an up-to-date instance skips it. drizzle records each applied migration with its journal time
 * (`created_at`) and applies those newer than the last recorded; the same comparison is made here.
 * Any doubt (no table yet, an unreadable journal) answers false and the migrator decides.
 */
export async function schemaUpToDate(migrationsFolder: string, query: (q: string) => Promise<{ rows: unknown[] }>): Promise<boolean> {
  try {
    const journal = JSON.parse(await readFile(path.join(migrationsFolder, 'meta', '_journal.json'), 'utf8')) as { entries: Array<{ when: number }> };
    const newest = Math.max(...journal.entries.map((e) => e.when));
    const { rows } = await query('select max(created_at) as last from drizzle.__drizzle_migrations');
    const last = (rows[0] as { last: unknown } | undefined)?.last;
    return last !== null && last !== undefined && Number(last) >= newest;
  } catch {
    return false;
  }
}
