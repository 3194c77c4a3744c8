import { Readable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { FastifyReply } from 'fastify';
import type { Static } from 'typebox';
import type { Plus } from './schema.js';

type PlusT = Static<typeof Plus>;

/** Above this many characters of chunk text, a Plus answer is written in pieces. */
const STREAM_ABOVE_CHARS = 1_000_000;
/** Chunks serialised per event-loop turn. */
const CHUNKS_PER_TURN = 200;
const HOLE = '"fileChunks":[]';

/**
 * A Plus answer carries every chunk of every file twice (`fileData`, `fileDataProcessed`): for a
 * large document tens of megabytes of JSON, which one serializer call would build while the event
 * loop waits. A large answer is therefore written as a stream: the entry through the route's own
 * serializer with its files' chunk lists left empty, then each file's chunks a few hundred per
 * event-loop turn, spliced in where the empty lists stood. Small answers go the ordinary way.
 */
export function plusAnswer(reply: FastifyReply, entry: PlusT): PlusT | FastifyReply {
  let chars = 0;
  for (const f of entry.files) for (const c of f.fileChunks) chars += c.fileData.length + c.fileDataProcessed.length;
  if (chars <= STREAM_ABOVE_CHARS) return entry;
  const shell = reply.serialize({ ...entry, files: entry.files.map((f) => ({ ...f, fileChunks: [] })) }) as string;
  return reply.type('application/json; charset=utf-8').send(Readable.from(pieces(shell, entry)));
}

async function* pieces(shell: string, entry: PlusT): AsyncGenerator<string> {
  // The empty list appears once per file, in file order: inside a string value its quotes would be escaped.
  const parts = shell.split(HOLE);
  if (parts.length !== entry.files.length + 1) throw new Error('plusAnswer: the serialized entry does not have one chunk list per file');
  yield parts[0]!;
  for (const [i, file] of entry.files.entries()) {
    yield '"fileChunks":[';
    for (let at = 0; at < file.fileChunks.length; at += CHUNKS_PER_TURN) {
      await nextTurn();
      const batch = file.fileChunks.slice(at, at + CHUNKS_PER_TURN);
      yield (
        (at > 0 ? ',' : '') +
        batch.map((c) => JSON.stringify({ id: c.id, fileData: c.fileData, fileDataProcessed: c.fileDataProcessed, tokenSize: c.tokenSize })).join(',')
      );
    }
    yield ']' + parts[i + 1]!;
  }
}
