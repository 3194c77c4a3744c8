/**
 * How `npm run cli -- backup` reaches a running server: a local socket beside the data
 * (DATA_DIR/admin.sock; a named pipe on Windows), served only with the embedded database on
 * disk. PGlite is single-process, so the CLI cannot open a folder the server holds; it asks the
 * server instead. Being able to connect is the authorisation: the socket is the owner's only
 * (0600), the same people who can read DATA_DIR, which holds the database itself.
 *
 *   GET /backup  → 200 application/x-tar: the backup file (ops/backup.ts)
 */
import { createHash } from 'node:crypto';
import { chmod, unlink } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import type { Database } from '../db/client.js';
import type { Job } from '../jobs.js';
import { backupArchive } from './backup-archive.js';

/** Unix socket paths are limited to ~104 bytes: a long DATA_DIR gets one in the temporary folder, named by its path. */
export function adminSocketPath(dataDir: string): string {
  const id = createHash('sha256').update(path.resolve(dataDir)).digest('hex').slice(0, 16);
  if (process.platform === 'win32') return `\\\\.\\pipe\\atrium-${id}`;
  const beside = path.join(path.resolve(dataDir), 'admin.sock');
  return Buffer.byteLength(beside) <= 100 ? beside : path.join(tmpdir(), `atrium-${id}.sock`);
}

/** Whether something answers on the socket (a server holds this DATA_DIR). */
export function socketAnswers(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(socketPath);
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

/**
 * The socket, served from the job's start until its stop (src/jobs.ts; buildApp starts it once
 * the app is ready). Only with the embedded database on disk; when another process answers on
 * the socket or it cannot be opened, backups through this server are off (a warning, no failure).
 */
export function adminSocket(log: FastifyBaseLogger, dataDir: string, database: Database): Job {
  let server: http.Server | null = null;
  return {
    name: 'admin socket',
    async start() {
      const dump = database.dumpDataDir;
      if (!dump) return;
      const socketPath = adminSocketPath(dataDir);
      if (await socketAnswers(socketPath)) {
        log.warn({ socket: socketPath }, 'another process answers on the admin socket of this DATA_DIR; backups through this server are off');
        return;
      }
      // A socket file left by a server that did not stop cleanly.
      if (process.platform !== 'win32') await unlink(socketPath).catch(() => undefined);
      const serving = http.createServer((req, res) => {
        if (req.method !== 'GET' || req.url !== '/backup') {
          res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
          return;
        }
        backupArchive(dataDir, () => dump.call(database)).then(
          (archive) => res.writeHead(200, { 'content-type': 'application/x-tar', 'content-length': archive.length }).end(archive),
          (err: unknown) => {
            log.error({ err }, 'backup failed');
            res.writeHead(500, { 'content-type': 'text/plain' }).end('the backup failed; see the server log\n');
          },
        );
      });
      const listening = await new Promise<boolean>((resolve) => {
        serving.once('error', (err) => {
          log.warn({ err, socket: socketPath }, 'the admin socket could not be opened; `npm run cli -- backup` cannot reach this server');
          resolve(false);
        });
        serving.listen(socketPath, () => resolve(true));
      });
      if (!listening) return;
      if (process.platform !== 'win32') await chmod(socketPath, 0o600);
      serving.unref();
      server = serving;
    },
    async stop() {
      const s = server;
      server = null;
      if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
    },
  };
}

/** The backup from the server holding DATA_DIR; null when none answers there. */
export function backupFromServer(dataDir: string): Promise<Uint8Array | null> {
  const socketPath = adminSocketPath(dataDir);
  return new Promise((resolve, reject) => {
    const req = http.get({ socketPath, path: '/backup' }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const body = Buffer.concat(chunks);
        if (res.statusCode === 200) resolve(new Uint8Array(body.buffer, body.byteOffset, body.byteLength));
        else reject(new Error(`the running server could not take the backup (${res.statusCode}): ${body.toString('utf8').trim()}`));
      });
    });
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT' || err.code === 'ECONNREFUSED') resolve(null);
      else reject(err);
    });
  });
}
