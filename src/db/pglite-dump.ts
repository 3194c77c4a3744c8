import type { PGlite } from '@electric-sql/pglite';

/**
 * A consistent copy of the embedded database's folder, as PGlite's own tarball (gzip). PGlite
 * takes it between two statements (it holds its query lock while it copies), so it is what a
 * crash at that instant would leave: a transaction still open is rolled back when the copy is
 * opened. The checkpoint first makes the copy's recovery short.
 */
export async function dumpPglite(pg: PGlite): Promise<Uint8Array> {
  await pg.query('checkpoint');
  const file = await pg.dumpDataDir('gzip');
  return new Uint8Array(await file.arrayBuffer());
}

/** Fill the empty folder `dir` from a tarball of dumpPglite; the database is opened once (its recovery runs) and closed. */
export async function loadPglite(dir: string, tarball: Uint8Array): Promise<void> {
  const { PGlite } = await import('@electric-sql/pglite');
  const blob = new Blob([tarball as Uint8Array<ArrayBuffer>], { type: 'application/x-gzip' });
  const pg = await PGlite.create(dir, { loadDataDir: blob });
  try {
    await pg.query('select 1');
  } finally {
    await pg.close();
  }
}
