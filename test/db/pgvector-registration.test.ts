import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/client.js';
import { vectorMarker } from '../../src/db/files.js';

/**
 * pgvector on the on-disk embedded database (db/files.ts, vectorMarker): registered with PGlite
 * only from the first start after vector search was used (VECTOR_EXTENSION=auto), at every start
 * with `on`, never with `off`; until it is registered, vectorOps() says false (the real[] search).
 */
const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(path.join(tmpdir(), 'atrium-pgvector-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function withDb<T>(dataDir: string, vectorExtension: 'auto' | 'on' | 'off', f: (db: Awaited<ReturnType<typeof openDatabase>>) => Promise<T>): Promise<T> {
  const db = await openDatabase({ databaseUrl: null, dataDir, vectorExtension });
  try {
    return await f(db);
  } finally {
    await db.close();
  }
}

const cosine = (db: Awaited<ReturnType<typeof openDatabase>>) =>
  db.db.execute(sql`select ('[1,0]'::vector <=> '[0,1]'::vector) as d`).then((r) => Number((r as unknown as { rows: Array<{ d: number }> }).rows[0]!.d));

// Each test starts the embedded database on disk two or three times (with the extension loaded,
// ~5 s each on a loaded 2-core machine): more than the default 20 s.
describe('pgvector on the embedded database', { timeout: 90_000 }, () => {
  it('auto: the first use notes it and answers false; the next start registers it and vector operators work', async () => {
    const dataDir = tmp();
    expect(await withDb(dataDir, 'auto', (db) => db.vectorOps())).toBe(false);
    expect(existsSync(vectorMarker(dataDir))).toBe(true);
    expect(await withDb(dataDir, 'auto', async (db) => [await db.vectorOps(), await cosine(db)])).toEqual([true, 1]);
  });

  it('a folder that never used vector search does not register it', async () => {
    const dataDir = tmp();
    await withDb(dataDir, 'auto', async (db) => {
      await db.ping();
    });
    expect(existsSync(vectorMarker(dataDir))).toBe(false);
    // without the extension's files, CREATE EXTENSION is impossible: vectorOps must not have tried
    await expect(withDb(dataDir, 'auto', (db) => db.db.execute(sql`create extension vector`))).rejects.toThrow();
  });

  it('on: registered at the first start; off: never, and nothing noted', async () => {
    expect(await withDb(tmp(), 'on', async (db) => [await db.vectorOps(), await cosine(db)])).toEqual([true, 1]);
    const off = tmp();
    expect(await withDb(off, 'off', (db) => db.vectorOps())).toBe(false);
    expect(existsSync(vectorMarker(off))).toBe(false);
  });

  it('on its own thread, the same rule', async () => {
    const dataDir = tmp();
    const open = () => openDatabase({ databaseUrl: null, dataDir, vectorExtension: 'auto', thread: true });
    const first = await open();
    expect(await first.vectorOps().finally(() => first.close())).toBe(false);
    const second = await open();
    try {
      expect(await second.vectorOps()).toBe(true);
      expect(await cosine(second)).toBe(1);
    } finally {
      await second.close();
    }
  });
});
