/**
 * The embedded database's thread (the default; EMBEDDED_DB_THREAD=off keeps it on the app's thread): PGlite (PostgreSQL compiled to
 * WebAssembly) opened, migrated and queried here, off the application's thread (db/pglite-thread.ts
 * is the other end), so its start can run beside the application's loading and its statements
 * beside HTTP work — on 2 cores that measured no faster (docs/DECISIONS.md, "Start-up"). Requests
 * are answered in the order PGlite finishes them; a transaction holds PGlite's own lock, so other
 * queries wait for it exactly as they would in-process.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { PGlite as PGliteT, Transaction } from '@electric-sql/pglite';
import { preparedOnThisThread } from './driver.js';
import { dumpPglite } from './pglite-dump.js';
import { openPglite } from './pglite-open.js';
import { serializeError, type Reply, type Request, type WorkerStart } from './pglite-protocol.js';

const port = parentPort!;
const start = workerData as WorkerStart;
const post = (m: Reply) => port.postMessage(m);
const identity = (v: unknown) => v;

interface OpenTx {
  tx: Transaction;
  finish: (commit: boolean) => void;
}

class RolledBack extends Error {}

function serve(pg: PGliteT): void {
  const txs = new Map<number, OpenTx>();
  const ends = new Map<number, Promise<void>>();
  const answer = (id: number, work: Promise<unknown>) =>
    work.then(
      (value) => post({ type: 'reply', id, ok: true, value }),
      (err: unknown) => post({ type: 'reply', id, ok: false, error: serializeError(err) }),
    );

  port.on('message', (m: Request) => {
    switch (m.op) {
      case 'query': {
        const target = m.tx === null ? pg : txs.get(m.tx)?.tx;
        if (!target) return void answer(m.id, Promise.reject(new Error('transaction already finished')));
        const parsers = Object.fromEntries(m.rawTypes.map((oid) => [oid, identity]));
        return void answer(
          m.id,
          target.query(m.sql, m.params, { rowMode: m.rowMode, parsers }).then((r) => ({ rows: r.rows, fields: r.fields, affectedRows: r.affectedRows })),
        );
      }
      case 'prepared':
        return void answer(m.id, preparedOnThisThread(pg, m.sql, m.params, m.write, m.textTypes));
      case 'begin': {
        // Answered as soon as the transaction is open; it ends when 'commit' or 'rollback' settles `finish`.
        let opened = false;
        const ended = pg.transaction(
          (tx) =>
            new Promise<void>((resolve, reject) => {
              opened = true;
              txs.set(m.id, { tx, finish: (commit) => (commit ? resolve() : reject(new RolledBack())) });
              post({ type: 'reply', id: m.id, ok: true, value: m.id });
            }),
        );
        ends.set(m.id, ended);
        // A BEGIN that fails is this request's answer; later outcomes are read by commit/rollback.
        ended.catch((err: unknown) => {
          if (opened) return;
          ends.delete(m.id);
          post({ type: 'reply', id: m.id, ok: false, error: serializeError(err) });
        });
        return;
      }
      case 'commit':
      case 'rollback': {
        const open = txs.get(m.tx);
        const ended = ends.get(m.tx);
        if (!open || !ended) return void answer(m.id, Promise.reject(new Error('no such transaction')));
        txs.delete(m.tx);
        ends.delete(m.tx);
        open.finish(m.op === 'commit');
        return void answer(
          m.id,
          ended.then(
            () => null,
            (err: unknown) => {
              if (err instanceof RolledBack) return null;
              throw err;
            },
          ),
        );
      }
      case 'dump':
        return void answer(m.id, dumpPglite(pg));
      case 'close':
        return void answer(m.id, pg.close());
    }
  });
}

openPglite(start.dataDir ?? undefined, start.vector, start.sharedBuffers).then(
  (pg) => {
    serve(pg);
    post({ type: 'ready' });
  },
  (err: unknown) => post({ type: 'failed', error: serializeError(err) }),
);
