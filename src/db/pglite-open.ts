import type { PGlite } from '@electric-sql/pglite';
import { MIGRATIONS, seedIfEmpty } from './files.js';
import { sharedBuffersFor, sharedBuffersParam, type SharedBuffersSetting } from './pglite-memory.js';
import { MIGRATIONS_TABLE, schemaUpToDate } from './driver.js';
import { tuneWasmTiering } from './wasm-tiering.js';

/**
 * PGlite opened on `dir` (seeded from the build's copy when empty; undefined: in memory) with its
 * schema brought up to date — the one way the embedded database is opened, in-process
 * (db/client.ts) or on its own thread (db/pglite-worker.ts). With `vector`, pgvector's files are
 * registered (client.ts decides: files.ts, vectorMarker); the extension is created only by
 * `vectorOps()` (CREATE EXTENSION). Its page cache (`shared_buffers`) is sized by pglite-memory.ts.
 */
export async function openPglite(dir: string | undefined, vector: boolean, sharedBuffers: SharedBuffersSetting = 'auto'): Promise<PGlite> {
  tuneWasmTiering();
  const [{ PGlite }, pgvector, buffers] = await Promise.all([
    import('@electric-sql/pglite'),
    vector ? import('@electric-sql/pglite-pgvector').then((m) => m.vector) : null,
    (dir ? seedIfEmpty(dir) : Promise.resolve()).then(() => sharedBuffersFor(dir, sharedBuffers)),
  ]);
  const pg = await PGlite.create(dir, {
    ...(pgvector ? { extensions: { vector: pgvector } } : {}),
    startParams: [...PGlite.defaultStartParams, '-c', sharedBuffersParam(buffers)],
  });
  try {
    if (!(await schemaUpToDate(MIGRATIONS, (q) => pg.query(q)))) {
      const [{ drizzle }, { migrate }] = await Promise.all([import('drizzle-orm/pglite'), import('drizzle-orm/pglite/migrator')]);
      await migrate(drizzle({ client: pg }), { migrationsFolder: MIGRATIONS, ...MIGRATIONS_TABLE });
    }
  } catch (err) {
    await pg.close();
    throw err;
  }
  return pg;
}
