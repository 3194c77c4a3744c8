import { existsSync } from 'node:fs';
import { cp, mkdir, readdir, rename, rm, rmdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CODE_ROOT } from '../paths.js';

/** Files of the database layer read at run time, found from the code root (src/ or dist/). */
const HERE = fileURLToPath(new URL('db/', CODE_ROOT));
export const MIGRATIONS = path.join(HERE, 'migrations');
/**
 * A PGlite data folder initialised and migrated by the build (scripts/build.mjs → dist/db/seed),
 * so a first start copies it instead of running initdb in WebAssembly (~3.5 s on 2 cores).
 * Absent when running from src/ (tsx): then PGlite initialises the folder itself.
 */
export const SEED_DIR = path.join(HERE, 'seed', 'pglite');

/** The embedded database's folder inside DATA_DIR. */
export const pgliteDir = (dataDir: string): string => path.join(dataDir, 'pglite');

/**
 * A file in DATA_DIR that says vector search has been used with this folder's embedded database:
 * from then on every start registers pgvector's files with PGlite (VECTOR_EXTENSION=auto), which
 * costs ~35 ms of every start that does it (compiling the extension's WebAssembly), so an
 * instance that never embeds never pays it. PGlite can only register an extension when it
 * starts: the first use writes the file, and vector search runs on real[] until the next start.
 */
export const vectorMarker = (dataDir: string): string => path.join(dataDir, 'pgvector-used');

/**
 * DATA_DIR's answer journal: plain answers of the embedded database acknowledged before their
 * statement committed, stored by the next start if a stop came first (modules/chat/answer-journal.ts).
 */
export const answerJournalFile = (dataDir: string): string => path.join(dataDir, 'answers.journal');

/** Whether the embedded database in `dataDir` registers pgvector at this start (see vectorMarker). */
export function registerVector(dataDir: string, setting: 'auto' | 'on' | 'off'): boolean {
  return setting === 'on' || (setting === 'auto' && existsSync(vectorMarker(dataDir)));
}

/**
 * On an empty (or absent) data folder, start from the build's seed instead of initdb. The copy
 * goes to a sibling folder renamed into place, so a crash mid-copy never leaves a half database.
 * The seed holds no instance data (no keys, no teams); migrations still run after it.
 */
export async function seedIfEmpty(dir: string): Promise<void> {
  const entries = await readdir(dir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return null;
    throw err;
  });
  if (entries !== null && entries.length > 0) return;
  if (!existsSync(path.join(SEED_DIR, 'PG_VERSION'))) {
    await mkdir(dir, { recursive: true });
    return;
  }
  await mkdir(path.dirname(dir), { recursive: true });
  const staging = `${dir}.seeding-${process.pid}`;
  try {
    await cp(SEED_DIR, staging, { recursive: true });
    if (entries !== null) await rmdir(dir);
    await rename(staging, dir);
  } catch (err) {
    await rm(staging, { recursive: true, force: true });
    throw err;
  }
}
