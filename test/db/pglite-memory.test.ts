import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/client.js';
import { pgliteDir } from '../../src/db/files.js';
import { IN_MEMORY_SHARED_BUFFERS, MAX_AUTO_SHARED_BUFFERS, sharedBuffersFor } from '../../src/db/pglite-memory.js';

/**
 * The embedded database's page cache (`shared_buffers`, db/pglite-memory.ts): sized to the data
 * on `auto`, as configured otherwise, and really the one PostgreSQL runs with.
 */
const MB = 1024 * 1024;
const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(path.join(tmpdir(), 'atrium-buffers-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A PGlite-like folder whose database folders hold files of the given sizes. */
function fakeData(dbs: Record<string, number[]>): string {
  const dir = tmp();
  for (const [db, sizes] of Object.entries(dbs)) {
    mkdirSync(path.join(dir, 'base', db), { recursive: true });
    sizes.forEach((n, i) => writeFileSync(path.join(dir, 'base', db, String(16384 + i)), Buffer.alloc(n)));
  }
  return dir;
}

describe('shared_buffers of the embedded database', () => {
  it('auto: twice the data rounded up to 16 MB, templates left out, between 32 and 128 MB', async () => {
    expect(await sharedBuffersFor(undefined, 'auto')).toBe(IN_MEMORY_SHARED_BUFFERS);
    expect(await sharedBuffersFor(tmp(), 'auto')).toBe(32 * MB); // nothing yet
    // 9 MB of data (templates' 30 MB ignored) → 18 MB → 32 MB
    expect(await sharedBuffersFor(fakeData({ '1': [15 * MB], '4': [15 * MB], '5': [5 * MB, 4 * MB] }), 'auto')).toBe(32 * MB);
    // 40 MB → 80 MB
    expect(await sharedBuffersFor(fakeData({ '5': [30 * MB], '16384': [10 * MB] }), 'auto')).toBe(80 * MB);
    // 100 MB → capped
    expect(await sharedBuffersFor(fakeData({ '5': [100 * MB] }), 'auto')).toBe(MAX_AUTO_SHARED_BUFFERS);
  });

  it('a configured size is used as it is', async () => {
    expect(await sharedBuffersFor(fakeData({ '5': [100 * MB] }), 48 * MB)).toBe(48 * MB);
    expect(loadConfig({}).embeddedSharedBuffers).toBe('auto');
    expect(loadConfig({ EMBEDDED_SHARED_BUFFERS: '256MB' }).embeddedSharedBuffers).toBe(256 * MB);
    expect(loadConfig({ EMBEDDED_SHARED_BUFFERS: '1024MB' }).embeddedSharedBuffers).toBe(1024 * MB);
    for (const bad of ['0MB', '64', '64 MB', '1GB', 'lots', '1025MB', '3000MB'])
      expect(() => loadConfig({ EMBEDDED_SHARED_BUFFERS: bad }), bad).toThrow(ConfigError);
  });

  it('is what PostgreSQL runs with, in-process and on the thread', async () => {
    const dataDir = tmp();
    for (const [thread, setting] of [
      [false, 48 * MB], // creates the database
      [false, 'auto'], // its data is a few MB: 32 MB
      [true, 24 * MB],
    ] as const) {
      const size = await sharedBuffersFor(pgliteDir(dataDir), setting);
      if (setting === 'auto') expect(size).toBe(32 * MB);
      const expected = `${size / MB}MB`;
      const db = await openDatabase({ databaseUrl: null, dataDir, thread, sharedBuffers: setting });
      try {
        const res = (await db.db.execute(sql`show shared_buffers`)) as unknown as { rows: Array<{ shared_buffers: string }> };
        expect(res.rows[0]!.shared_buffers, `thread ${thread}, ${setting}`).toBe(expected);
      } finally {
        await db.close();
      }
    }
    // three on-disk starts of the embedded database, the first creating it: slow on a busy machine
  }, 120_000);
});
