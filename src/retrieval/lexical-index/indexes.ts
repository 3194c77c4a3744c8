/**
 * An in-memory lexical index of Plus entries: the same candidates and features as featuresSql
 * (search-sql.ts) — hence, scored by the one scorer (score.ts), the same ranking — read from
 * postings held in this process instead of by the database over the tsvector column.
 *
 * Why: on the embedded database every search step is planned and run in WebAssembly over every
 * candidate row (~10 ms p50 at 100k chunks); here a question costs one small statement (the
 * entry, with the question's lexemes) and one read of the texts actually used.
 *
 * The database stays the only truth. An index is built from plus_chunks.search (the stored
 * tsvectors) at the entry's `lexical_version`, which the database raises with every statement
 * that inserts or deletes the entry's chunks (migration 0013); a search uses the index only when
 * the version it read with the entry is the index's, and the SQL ranking otherwise (and rebuilds
 * the index in the background). So no write path, cascade or other node can leave it answering
 * from stale chunks. docs/DECISIONS.md, "In-memory lexical index".
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { sql } from 'drizzle-orm';
import { storingFilesOf } from '../../db/schema/plus.js';
import type { Executor } from '../../db/client.js';
import { IndexBuilder } from './builder.js';
import { EntryIndex } from './entry-index.js';
import { execute } from '../../db/driver.js';

/** Chunks read per statement while building (other queries run between them). */
const BUILD_BATCH = 25;
/** Milliseconds of parsing between two turns of the event loop while building (a chunk takes tens of microseconds, more on a busy machine). */
const PARSE_SLICE_MS = 4;

/**
 * Build an entry's index from the database. `unusable` at a version: the entry holds more than
 * `maxChunks` chunks, or not as many as its chunk_count says (written other than by PlusRepo):
 * not tried again until the entry changes. Null: the entry is gone, changed while it was read
 * (its lexical_version moved: read again later), or the build was stopped.
 */
export async function buildEntryIndex(
  db: Executor,
  teamId: string,
  plusId: string,
  maxChunks: number,
  stopped: () => boolean = () => false,
): Promise<EntryIndex | { unusable: number } | null> {
  type Head = { version: number | string; chunk_count: number; tokens: number | string };
  const head = async () =>
    (
      await execute<Head>(
        db,
        sql`
      select e.lexical_version as version, e.chunk_count, (select coalesce(sum(f.token_size), 0) from plus_files f where f.team_id = e.team_id and f.plus_id = e.id and not f.storing)::float8 as tokens
      from plus_entries e where e.team_id = ${teamId}::uuid and e.id = ${plusId}::uuid`,
      )
    ).rows[0];
  const before = await head();
  if (!before) return null;
  if (before.chunk_count > maxChunks) return { unusable: Number(before.version) };
  const builder = new IndexBuilder();
  const files = await execute<{ id: string; filename: string; token_size: number }>(
    db,
    sql`select f.id, f.filename, f.token_size from plus_files f where f.team_id = ${teamId}::uuid and f.plus_id = ${plusId}::uuid and not f.storing`,
  );
  for (const f of files.rows) builder.addFile(f.id, f.filename, Number(f.token_size));
  // From the entry's first chunk (plus_chunks_plus_idx): from 0, the planner walked the primary
  // key past every older entry's chunks for the first page (0.1 s after 20,000 of them).
  const first = await execute<{ id: number | string | null }>(
    db,
    sql`select min(c.id) as id from plus_chunks c where c.team_id = ${teamId}::uuid and c.plus_id = ${plusId}::uuid`,
  );
  let last = Number(first.rows[0]?.id ?? 1) - 1;
  for (;;) {
    if (stopped()) return null;
    const res = await execute<{ id: number | string; file_id: string; token_size: number; search: string | null }>(
      db,
      sql`
      select c.id, c.file_id, c.token_size, c.search::text as search
      from plus_chunks c
      where c.team_id = ${teamId}::uuid and c.plus_id = ${plusId}::uuid and c.id > ${last} and c.file_id <> all(${storingFilesOf(sql`${teamId}::uuid`)})
      order by c.id limit ${BUILD_BATCH}`,
    );
    // a chunk of a file added since the files were read: the entry changed, read it again later
    let sliceStart = performance.now();
    for (let i = 0; i < res.rows.length; i++) {
      // let the event loop turn now and then: by time, as a chunk's cost varies with its length and the machine's load
      if (performance.now() - sliceStart > PARSE_SLICE_MS) {
        await nextTurn();
        sliceStart = performance.now();
      }
      const r = res.rows[i]!;
      if (!builder.addChunk(Number(r.id), r.file_id, r.token_size, r.search ?? '')) return null;
    }
    if (res.rows.length < BUILD_BATCH) break;
    last = Number(res.rows[res.rows.length - 1]!.id);
    if (builder.chunks > maxChunks) return { unusable: Number(before.version) };
  }
  const after = await head();
  if (!after || Number(after.version) !== Number(before.version)) return null;
  if (builder.chunks !== after.chunk_count) return { unusable: Number(before.version) };
  return await builder.seal(plusId, Number(before.version), Number(before.tokens));
}

export interface IndexStats {
  entries: number;
  chunks: number;
  bytes: number;
  building: number;
}

/** An entry's key among the indexes: its id is unique in its team only. */
const keyOf = (teamId: string, plusId: string) => `${teamId}/${plusId}`;

/**
 * The indexes of the entries searched lately, at most `maxChunks` chunks in all (the least
 * recently searched go first; an entry larger than that is searched by SQL). Built one at a time
 * in the background, when a search finds none current for its entry: that search, and those
 * until the build is done, rank in SQL.
 */
export class LexicalIndexes {
  private readonly ready = new Map<string, EntryIndex>();
  /** entries that could not be indexed at that version (buildEntryIndex) */
  private readonly unusable = new Map<string, number>();
  private readonly queue = new Set<string>();
  private running: Promise<void> | null = null;
  private closed = false;

  constructor(
    private readonly db: Executor,
    private readonly maxChunks: number,
    private readonly onError: (err: unknown, plusId: string) => void = () => {},
  ) {}

  /** Whether the entry has an index (at some version): a search reads the entry's version, then asks `current`. */
  has(teamId: string, plusId: string): boolean {
    return this.ready.has(keyOf(teamId, plusId));
  }

  /**
   * The entry's index if it was built at `version` of the entry; otherwise undefined, an older
   * index is dropped, and (unless the entry is too large) a build is queued.
   */
  current(teamId: string, plusId: string, version: number): EntryIndex | undefined {
    const key = keyOf(teamId, plusId);
    const idx = this.ready.get(key);
    if (idx && idx.version === version) {
      this.ready.delete(key);
      this.ready.set(key, idx); // most recently used last
      return idx;
    }
    if (idx) this.ready.delete(key);
    if (this.unusable.get(key) !== version && !this.closed) {
      this.queue.add(key);
      this.running ??= this.drain();
    }
    return undefined;
  }

  /** Resolves when no build is queued or running (tests, benchmarks, warm-up). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  stats(): IndexStats {
    let chunks = 0;
    let bytes = 0;
    for (const i of this.ready.values()) {
      chunks += i.chunks;
      bytes += i.bytes;
    }
    return { entries: this.ready.size, chunks, bytes, building: this.queue.size + (this.running ? 1 : 0) };
  }

  async close(): Promise<void> {
    this.closed = true;
    this.queue.clear();
    await this.idle();
    this.ready.clear();
  }

  private async drain(): Promise<void> {
    try {
      for (const key of this.queue) {
        this.queue.delete(key);
        if (this.closed) break;
        const [teamId, plusId] = key.split('/') as [string, string];
        try {
          const built = await buildEntryIndex(this.db, teamId, plusId, this.maxChunks, () => this.closed);
          if (built instanceof EntryIndex) this.add(key, built);
          else if (built) this.unusable.set(key, built.unusable);
        } catch (err) {
          if (!this.closed) this.onError(err, plusId);
        }
      }
    } finally {
      this.running = null;
    }
  }

  private add(key: string, idx: EntryIndex): void {
    this.ready.delete(key);
    this.unusable.delete(key);
    let chunks = idx.chunks;
    for (const i of this.ready.values()) chunks += i.chunks;
    for (const [id, i] of this.ready) {
      if (chunks <= this.maxChunks) break;
      this.ready.delete(id);
      chunks -= i.chunks;
    }
    this.ready.set(key, idx);
  }
}
