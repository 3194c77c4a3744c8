/**
 * The backup file: a plain tar (ustar) archive, so an operator can list it with `tar tf`:
 *
 *   atrium-backup.json   what it is (format, when, which files)
 *   pglite.tar.gz        the embedded database's folder as PGlite dumps it (db/pglite-dump.ts)
 *   secret.key           DATA_DIR/secret.key when the instance uses one (it opens the provider keys)
 *   pgvector-used        DATA_DIR's marker that vector search is in use (db/files.ts)
 *   answers.journal      answers acknowledged but not yet in the database when the backup began
 *                        (db/files.ts): the restored server's first start stores them
 *
 * Uploaded files live in the database (their bytes in a table), so the dump holds them.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { answerJournalFile, vectorMarker } from '../db/files.js';

export const MANIFEST = 'atrium-backup.json';
export const FORMAT = 1;

export interface Manifest {
  format: number;
  kind: 'pglite';
  created: string;
  files: string[];
}

export class BackupFormatError extends Error {}

const BLOCK = 512;

function header(name: string, size: number, mtime: number): Uint8Array {
  const h = new Uint8Array(BLOCK);
  const put = (text: string, at: number, len: number) => h.set(new TextEncoder().encode(text).subarray(0, len), at);
  const octal = (n: number, len: number) => n.toString(8).padStart(len - 1, '0');
  put(name, 0, 100);
  put(`${octal(0o600, 8)}\0`, 100, 8);
  put(`${octal(0, 8)}\0`, 108, 8);
  put(`${octal(0, 8)}\0`, 116, 8);
  put(`${octal(size, 12)}\0`, 124, 12);
  put(`${octal(mtime, 12)}\0`, 136, 12);
  put('        ', 148, 8); // the checksum's field counts as spaces while it is computed
  put('0', 156, 1);
  put('ustar\x0000', 257, 8);
  let sum = 0;
  for (const b of h) sum += b;
  put(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 8);
  return h;
}

/** A tar archive of the given files (names of at most 100 bytes). */
export function writeTar(files: Array<{ name: string; data: Uint8Array }>, mtime = Math.floor(Date.now() / 1000)): Uint8Array {
  const parts: Uint8Array[] = [];
  for (const f of files) {
    if (new TextEncoder().encode(f.name).length > 100) throw new Error(`tar member name too long: ${f.name}`);
    parts.push(header(f.name, f.data.length, mtime), f.data);
    const pad = (BLOCK - (f.data.length % BLOCK)) % BLOCK;
    if (pad) parts.push(new Uint8Array(pad));
  }
  parts.push(new Uint8Array(BLOCK * 2));
  return Buffer.concat(parts);
}

/** The regular files of a tar archive; throws BackupFormatError on anything that is not one. */
export function readTar(bytes: Uint8Array): Map<string, Uint8Array> {
  const files = new Map<string, Uint8Array>();
  const text = (at: number, len: number) => new TextDecoder().decode(bytes.subarray(at, at + len)).replace(/\0.*$/s, '');
  let at = 0;
  while (at + BLOCK <= bytes.length) {
    if (bytes.subarray(at, at + BLOCK).every((b) => b === 0)) return files;
    let sum = 0;
    for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 32 : bytes[at + i]!;
    if (Number.parseInt(text(at + 148, 8).trim(), 8) !== sum) throw new BackupFormatError('not an Atrium backup (a tar header has a bad checksum)');
    const name = text(at, 100);
    const size = Number.parseInt(text(at + 124, 12).trim() || '0', 8);
    const type = text(at + 156, 1);
    if (!Number.isFinite(size) || size < 0 || at + BLOCK + size > bytes.length) throw new BackupFormatError('the backup file is truncated');
    if (type === '0' || type === '') files.set(name, bytes.subarray(at + BLOCK, at + BLOCK + size));
    at += BLOCK + Math.ceil(size / BLOCK) * BLOCK;
  }
  throw new BackupFormatError('the backup file is truncated (no end-of-archive marker)');
}

/** The backup's manifest, checked. */
export function readManifest(files: Map<string, Uint8Array>): Manifest {
  const raw = files.get(MANIFEST);
  if (!raw) throw new BackupFormatError(`not an Atrium backup (no ${MANIFEST} inside)`);
  let m: Partial<Manifest>;
  try {
    m = JSON.parse(new TextDecoder().decode(raw)) as Partial<Manifest>;
  } catch {
    throw new BackupFormatError(`not an Atrium backup (${MANIFEST} is not JSON)`);
  }
  if (m.format !== FORMAT || m.kind !== 'pglite')
    throw new BackupFormatError(`unsupported backup format ${String(m.format)} (this version reads format ${FORMAT})`);
  if (!files.has('pglite.tar.gz')) throw new BackupFormatError('the backup holds no database (pglite.tar.gz is missing)');
  return m as Manifest;
}

/** The backup file of DATA_DIR, from a dump of its database (the server's, or one the CLI opened). */
export async function backupArchive(dataDir: string, dump: () => Promise<Uint8Array>): Promise<Uint8Array> {
  // Read before the dump: an answer acknowledged by then is in the journal still, or already in the database.
  const journal = await readFile(answerJournalFile(dataDir)).catch(() => null);
  const files: Array<{ name: string; data: Uint8Array }> = [{ name: 'pglite.tar.gz', data: await dump() }];
  if (journal?.length) files.push({ name: 'answers.journal', data: journal });
  for (const [name, file] of [
    ['secret.key', path.join(dataDir, 'secret.key')],
    ['pgvector-used', vectorMarker(dataDir)],
  ] as const) {
    const data = await readFile(file).catch(() => null);
    if (data) files.push({ name, data });
  }
  const manifest: Manifest = { format: FORMAT, kind: 'pglite', created: new Date().toISOString(), files: files.map((f) => f.name) };
  return writeTar([{ name: MANIFEST, data: new TextEncoder().encode(`${JSON.stringify(manifest, null, 2)}\n`) }, ...files]);
}
