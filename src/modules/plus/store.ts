/**
 * Storing uploaded files in steps that each hold the database briefly.
 *
 * The embedded database has one connection: a transaction writing an 18 MB document's 19,000
 * chunks held it ~18 s, and every chat turn waited behind it. So a file is stored as
 * (1) its row, marked `storing`, with the caller's first writes, in one transaction;
 * (2) its chunks, a batch per statement, each statement returning its lexemes' chunk counts;
 * (3) in one transaction, the entry's chunk count and term counts (plus_terms), the files no
 *     longer storing, the entry's lexical version, and the caller's last writes.
 * Until (3) commits, the files and their chunks are part of nothing: every reader of plus_files
 * and plus_chunks leaves storing files out (`not f.storing`; for chunks, `storingFilesOf` in db/schema/plus.ts), and the lexical
 * version trigger ignores their chunks (migration 0033). A failed step deletes what the upload
 * wrote; what a crash leaves, `sweepUnfinished` deletes.
 */
import { and, eq, lt, sql } from 'drizzle-orm';
import type { Db, Tx } from '../../db/client.js';
import { execute } from '../../db/driver.js';
import { plusEntries, plusFiles } from '../../db/schema/plus.js';
import type { NewChunk, NewFile } from './repo.js';

/** Characters of chunk text per statement (both forms): about 20 ms of the embedded database's work here. */
const BATCH_CHARS = 24_000;
/**
 * Batches between two merges of the GIN index's pending list: merged after every batch, the
 * merges took a third of the upload's time; left to the insert that overflows the list (4 MB),
 * that insert took ~140 ms. Every 8 batches: a merge of ~30 ms, but up to 87 ms on a busy 2-core
 * machine; every 4, half the entries to merge each time.
 */
const GIN_MERGE_EVERY = 4;
/** Chunks deleted per statement when an unfinished upload is taken back. */
const DELETE_BATCH = 500;

export interface StoreSteps {
  /** writes that go with the file rows (create or update the entry) */
  first(tx: Tx): Promise<void>;
  /** writes that go with the files becoming visible (queue their embeddings, the audit record) */
  last(tx: Tx): Promise<void>;
  /** takes back what `first` wrote, when a later step fails (called only once `first` committed) */
  undo?(db: Db): Promise<void>;
}

/** Store `files` (all of one entry) with their chunks and the entry's statistics (see above). */
export async function storeFiles(db: Db, files: NewFile[], steps: StoreSteps): Promise<void> {
  if (files.length === 0) {
    await db.transaction(async (tx) => {
      await steps.first(tx);
      await steps.last(tx);
    });
    return;
  }
  const { teamId, plusId } = files[0]!;
  if (files.some((f) => f.teamId !== teamId || f.plusId !== plusId)) throw new Error('storeFiles: files of one entry only');
  await db.transaction(async (tx) => {
    await steps.first(tx);
    for (const { chunks: _, ...file } of files) await tx.insert(plusFiles).values({ ...file, bytes: file.content.length, storing: true });
  });
  try {
    const df = new Map<string, number>();
    let written = 0;
    const mergeGin = () => execute(db, sql`select gin_clean_pending_list('plus_chunks_search_idx'::regclass)`);
    for (const f of files) {
      for (const batch of batches(f.chunks)) {
        for (const [lexeme, n] of await insertChunks(db, f, batch)) df.set(lexeme, (df.get(lexeme) ?? 0) + n);
        if (++written % GIN_MERGE_EVERY === 0) await mergeGin();
      }
    }
    // what is left in the list: every search would scan it until a merge
    if (written % GIN_MERGE_EVERY !== 0) await mergeGin();
    const chunkCount = files.reduce((n, f) => n + f.chunks.length, 0);
    await db.transaction(async (tx) => {
      // The entry's row first: its lock orders concurrent writers of the entry's statistics.
      const [entry] = await tx
        .update(plusEntries)
        .set({ chunkCount: sql`${plusEntries.chunkCount} + ${chunkCount}`, lexicalVersion: sql`${plusEntries.lexicalVersion} + 1` })
        .where(and(eq(plusEntries.teamId, teamId), eq(plusEntries.id, plusId)))
        .returning({ id: plusEntries.id });
      if (!entry) throw new Error('storeFiles: the entry is gone');
      if (df.size > 0) {
        await execute(
          tx,
          sql`
          insert into plus_terms (team_id, plus_id, lexeme, df)
          select ${teamId}::uuid, ${plusId}::uuid, t.key, t.value::int from json_each_text(${JSON.stringify(Object.fromEntries(df))}::json) t
          order by t.key
          on conflict (team_id, plus_id, lexeme) do update set df = plus_terms.df + excluded.df`,
        );
      }
      for (const f of files) await tx.update(plusFiles).set({ storing: false }).where(eq(plusFiles.id, f.id));
      await steps.last(tx);
    });
  } catch (err) {
    // what cannot be deleted now (the database is gone) sweepUnfinished deletes later
    await deleteStoring(
      db,
      files.map((f) => f.id),
    ).catch(() => undefined);
    await steps.undo?.(db).catch(() => undefined);
    throw err;
  }
}

/** Delete the files an upload left storing more than `olderThanMs` ago (it failed, or its node stopped). */
export async function sweepUnfinished(db: Db, olderThanMs: number): Promise<number> {
  const rows = await db
    .select({ id: plusFiles.id })
    .from(plusFiles)
    .where(and(eq(plusFiles.storing, true), lt(plusFiles.created, new Date(Date.now() - olderThanMs))));
  await deleteStoring(
    db,
    rows.map((r) => r.id),
  );
  return rows.length;
}

/** The chunks in batches of about BATCH_CHARS characters, each chunk read once (a packed one is decoded then). */
function* batches(chunks: NewFile['chunks']): Generator<NewChunk[]> {
  let batch: NewChunk[] = [];
  let chars = 0;
  for (let i = 0; i < chunks.length; i++) {
    const c = chunks.at(i)!;
    batch.push(c);
    chars += c.fileData.length + c.fileDataProcessed.length;
    if (chars >= BATCH_CHARS || i === chunks.length - 1) {
      yield batch;
      batch = [];
      chars = 0;
    }
  }
}

/** One statement: a batch of a file's chunks, and for each lexeme of their vectors the number of them that hold it. */
async function insertChunks(db: Db, f: NewFile, batch: NewChunk[]): Promise<Array<[string, number]>> {
  const rows = JSON.stringify(
    batch.map((c) => ({ idx: c.idx, data: c.fileData, processed: c.fileDataProcessed, tokens: c.tokenSize, heading: c.heading ?? null })),
  );
  const { rows: counts } = await execute<{ lexeme: string; n: number }>(
    db,
    sql`
    with ins as (
      insert into plus_chunks (file_id, team_id, plus_id, idx, file_data, file_data_processed, token_size, heading)
      select ${f.id}::uuid, ${f.teamId}::uuid, ${f.plusId}::uuid, r.idx, r.data, r.processed, r.tokens, r.heading
      from json_to_recordset(${rows}::json) as r(idx int, data text, processed text, tokens int, heading text)
      returning search)
    select l.lexeme, count(*)::int as n from ins, unnest(ins.search) l group by l.lexeme`,
  );
  return counts.map((r) => [r.lexeme, Number(r.n)]);
}

/** Delete storing files, their chunks a batch per statement first (a file's only: never one that finished). */
async function deleteStoring(db: Db, fileIds: string[]): Promise<void> {
  for (const id of fileIds) {
    for (;;) {
      const { rows } = await execute<{ n: number }>(
        db,
        sql`
        with gone as (
          delete from plus_chunks where id in (
            select c.id from plus_chunks c join plus_files f on f.id = c.file_id and f.storing where c.file_id = ${id}::uuid limit ${DELETE_BATCH}::int)
          returning 1)
        select count(*)::int as n from gone`,
      );
      if (Number(rows[0]?.n ?? 0) < DELETE_BATCH) break;
    }
    await db.delete(plusFiles).where(and(eq(plusFiles.id, id), eq(plusFiles.storing, true)));
  }
}
