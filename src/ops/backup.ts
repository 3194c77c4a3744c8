/**
 * Backup and restore of the embedded database (docs/OPERATIONS.md, "Backup and restore"):
 * `npm run cli -- backup <file>` asks the running server for a consistent copy over its admin
 * socket (admin-socket.ts) or, when no server holds DATA_DIR, opens the folder itself;
 * `npm run cli -- restore <file>` fills an empty DATA_DIR from such a file. With DATABASE_URL
 * the database is PostgreSQL's: pg_dump and pg_restore do this, and both commands say so.
 */
import { existsSync } from 'node:fs';
import { chmod, mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../config.js';
import { answerJournalFile, pgliteDir, registerVector, vectorMarker } from '../db/files.js';
import { dumpPglite, loadPglite } from '../db/pglite-dump.js';
import { backupFromServer, socketAnswers, adminSocketPath } from './admin-socket.js';
import { backupArchive, readManifest, readTar } from './backup-archive.js';

/** A refusal the CLI prints as it is (exit code 1). */
export class OpsError extends Error {}

const PG_DUMP_HINT = 'DATABASE_URL is set: the database is on a PostgreSQL server; use pg_dump / pg_restore (docs/OPERATIONS.md, "Backup and restore")';

/** `backup <file>`: what it did, in a sentence. */
export async function backup(config: Config, file: string): Promise<string> {
  if (config.databaseUrl !== null) throw new OpsError(PG_DUMP_HINT);
  let archive = await backupFromServer(config.dataDir);
  let source = 'from the running server';
  if (!archive) {
    const dir = pgliteDir(config.dataDir);
    if (!existsSync(path.join(dir, 'PG_VERSION'))) throw new OpsError(`${config.dataDir} holds no embedded database to back up`);
    archive = await backupArchive(config.dataDir, () => dumpOffline(config.dataDir, config.vectorExtension));
    source = 'from the data directory (no server was running)';
  }
  const target = path.resolve(file);
  const partial = `${target}.partial-${process.pid}`;
  await writeFile(partial, archive, { mode: 0o600 });
  await rename(partial, target);
  return `Backed up ${config.dataDir} ${source} to ${target} (${archive.length} bytes). It holds the secret key file when there is one: keep it as safe as DATA_DIR.`;
}

async function dumpOffline(dataDir: string, vectorSetting: Config['vectorExtension']): Promise<Uint8Array> {
  const { PGlite } = await import('@electric-sql/pglite');
  const vector = registerVector(dataDir, vectorSetting) ? (await import('@electric-sql/pglite-pgvector')).vector : null;
  const pg = await PGlite.create(pgliteDir(dataDir), vector ? { extensions: { vector } } : {});
  try {
    return await dumpPglite(pg);
  } finally {
    await pg.close();
  }
}

/** `restore <file>`: fills an empty DATA_DIR; what it did, in a sentence. */
export async function restore(config: Config, file: string): Promise<string> {
  if (config.databaseUrl !== null) throw new OpsError(PG_DUMP_HINT);
  const bytes = await readFile(path.resolve(file)).catch((err: NodeJS.ErrnoException) => {
    throw new OpsError(`cannot read ${file}: ${err.code ?? err.message}`);
  });
  let files: Map<string, Uint8Array>;
  try {
    files = readTar(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength));
    readManifest(files);
  } catch (err) {
    throw new OpsError(`${file}: ${err instanceof Error ? err.message : String(err)}`);
  }
  const dataDir = config.dataDir;
  if (await socketAnswers(adminSocketPath(dataDir))) throw new OpsError(`a server is running on ${dataDir}: stop it, and restore into an empty DATA_DIR`);
  const present = await readdir(dataDir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return [];
    throw err;
  });
  if (present.length > 0) {
    throw new OpsError(
      `DATA_DIR ${dataDir} is not empty (it holds ${present.slice(0, 5).join(', ')}${present.length > 5 ? ', …' : ''}): ` +
        'restore fills an empty directory only. Point DATA_DIR at a new directory, or move this one away first.',
    );
  }
  await mkdir(dataDir, { recursive: true });
  try {
    const key = files.get('secret.key');
    if (key) {
      await writeFile(path.join(dataDir, 'secret.key'), key, { mode: 0o600 });
      await chmod(path.join(dataDir, 'secret.key'), 0o600);
    }
    const marker = files.get('pgvector-used');
    if (marker) await writeFile(vectorMarker(dataDir), marker);
    const journal = files.get('answers.journal');
    if (journal) await writeFile(answerJournalFile(dataDir), journal, { mode: 0o600 });
    await loadPglite(pgliteDir(dataDir), files.get('pglite.tar.gz')!);
  } catch (err) {
    // The directory was empty: leave it so, for another attempt.
    for (const name of await readdir(dataDir).catch(() => [])) await rm(path.join(dataDir, name), { recursive: true, force: true });
    throw err;
  }
  return (
    `Restored ${file} into ${dataDir}.` +
    (files.has('secret.key') ? '' : ' The backup holds no secret key file: start the server with the SECRET_KEY the instance used.')
  );
}
