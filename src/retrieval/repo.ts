import { sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../db/client.js';
import { chooseTerms, quoteLexeme, rankQuery, TERM_OPTIONS, type Step, type TermChoice, type TermOptions, type TermStat } from './query.js';

export interface ScoredChunk {
  id: number;
  fileId: string;
  /** the file's name, for the header packing puts above the chunk */
  filename: string;
  plusId: string;
  text: string;
  tokenSize: number;
  score: number;
}

export interface ChunkScope {
  plusIds: string[];
  fileIds: string[];
}

/** Questions are cut to this many characters before their lexemes are taken (a pasted document stays cheap). */
const MAX_QUESTION_CHARS = 10_000;

const uuidList = (ids: string[]) => sql.join(ids.map((id) => sql`${id}::uuid`), sql`, `);
const isEmpty = (s: ChunkScope) => s.plusIds.length === 0 && s.fileIds.length === 0;

function scopeSql(s: ChunkScope): SQL {
  const parts = [];
  if (s.plusIds.length > 0) parts.push(sql`c.plus_id in (${uuidList(s.plusIds)})`);
  if (s.fileIds.length > 0) parts.push(sql`c.file_id in (${uuidList(s.fileIds)})`);
  return sql`(${sql.join(parts, sql` or `)})`;
}

/**
 * The entries whose statistics stand for the scope (`col` in them): its entries, and the entries
 * of its files. A scope's files (a thread's files) are searched alone, but their term statistics
 * are those of their whole entries — an approximation that keeps one df table per entry.
 */
function statsEntriesSql(s: ChunkScope, col: SQL): SQL {
  const parts = [];
  if (s.plusIds.length > 0) parts.push(sql`${col} in (${uuidList(s.plusIds)})`);
  if (s.fileIds.length > 0) parts.push(sql`${col} in (select f.plus_id from plus_files f where f.id in (${uuidList(s.fileIds)}))`);
  return sql`(${sql.join(parts, sql` or `)})`;
}

/**
 * One round trip: those of the question's lexemes (English stemming, stop words removed) that
 * occur in the scope's entries, with their document frequency summed over them, and the scope's
 * chunk count on every row. A question with no such lexeme gives no row.
 */
export function termStatsSql(scope: ChunkScope, question: string): SQL {
  return sql`
    select t.lexeme, sum(t.df)::int as df,
           (select coalesce(sum(e.chunk_count), 0) from plus_entries e where ${statsEntriesSql(scope, sql`e.id`)})::int as n
    from plus_terms t
    where ${statsEntriesSql(scope, sql`t.plus_id`)}
      and t.lexeme = any(tsvector_to_array(to_tsvector('english', ${question.slice(0, MAX_QUESTION_CHARS)})))
    group by t.lexeme`;
}

/**
 * For ONE entry (`entryId`, e.g. a column of an outer query): the question's lexemes that occur
 * in it with their df, as a JSON array of [lexeme, df] — a scalar subquery, so that the entry's
 * lookup and its term statistics take one round trip (PlusRepo.findWithTerms).
 */
export function entryTermsSql(entryId: SQL, question: string): SQL {
  return sql`(
    select coalesce(json_agg(json_build_array(t.lexeme, t.df)), '[]'::json)
    from plus_terms t
    where t.plus_id = ${entryId}
      and t.lexeme = any(tsvector_to_array(to_tsvector('english', ${question.slice(0, MAX_QUESTION_CHARS)}))))`;
}

/** The value of entryTermsSql. */
export function parseEntryTerms(v: unknown): TermStat[] {
  const list = (typeof v === 'string' ? JSON.parse(v) : v) as Array<[string, number]> | null;
  return (list ?? []).map(([lexeme, df]) => ({ lexeme, df: Number(df) }));
}

/**
 * The best chunks in scope of one step of a term choice, best first: the candidates are the
 * chunks matching the step's tsquery (GIN index). Their score: the sum of the idf of the ranking
 * lexemes they hold, times 1 + ts_rank over the OR of those lexemes (which adds how often and how
 * densely they occur).
 */
export function searchSql(scope: ChunkScope, choice: TermChoice, step: Step, limit: number): SQL {
  const idf = choice.rank.map((l, i) => sql`case when c.search @@ cast(${quoteLexeme(l)} as tsquery) then ${choice.idf[i]}::float8 else 0 end`);
  return sql`
    select c.id, c.file_id, c.plus_id, c.file_data_processed as text, c.token_size,
           (${sql.join(idf, sql` + `)}) * (1 + ts_rank(c.search, cast(${rankQuery(choice)} as tsquery), 1)) as score
    from plus_chunks c
    where c.search @@ cast(${step.match} as tsquery) and ${scopeSql(scope)}
    order by score desc, c.id
    limit ${limit}`;
}

/** The documents' opening chunks. */
export function leadingSql(scope: ChunkScope, limit: number): SQL {
  return sql`
    select c.id, c.file_id, c.plus_id, c.file_data_processed as text, c.token_size, 0 as score
    from plus_chunks c
    where ${scopeSql(scope)}
    order by c.idx, c.id
    limit ${limit}`;
}

/** The names of files missing from the cache (FilenameCache). */
export function filenamesSql(fileIds: string[]): SQL {
  return sql`select f.id, f.filename from plus_files f where f.id in (${uuidList(fileIds)})`;
}

/**
 * File id → file name. A file's name never changes (files are added and deleted, never renamed),
 * so the names of the files chunks come from are kept here, at most `max` of them (the oldest
 * go first), and looked up in one query only for files not seen before.
 */
export class FilenameCache {
  private readonly names = new Map<string, string>();
  constructor(private readonly max = 20_000) {}

  missing(fileIds: Iterable<string>): string[] {
    return [...new Set(fileIds)].filter((id) => !this.names.has(id));
  }

  get(fileId: string): string | undefined {
    return this.names.get(fileId);
  }

  set(fileId: string, name: string): void {
    this.names.delete(fileId);
    this.names.set(fileId, name);
    if (this.names.size > this.max) this.names.delete(this.names.keys().next().value!);
  }
}

type Row = { id: number | string; file_id: string; plus_id: string; text: string; token_size: number; score: number | string };

export interface TermStats {
  /** chunks of the entries in scope */
  n: number;
  terms: TermStat[];
}

export interface Retrieved {
  chunks: ScoredChunk[];
  /** the terms searched for (null: the question has no word that occurs in scope) */
  choice: TermChoice | null;
  /** how many of the choice's steps were run */
  steps: number;
  /** the opening chunks were used: nothing matched */
  leading: boolean;
}

/** Full-text search over chunk text: IDF-style term choice (query.ts), GIN index, ts_rank. */
export class RetrievalRepo {
  readonly filenames = new FilenameCache();

  constructor(private readonly termOptions: Readonly<TermOptions> = TERM_OPTIONS) {}

  async termStats(db: Executor, scope: ChunkScope, question: string): Promise<TermStats> {
    if (isEmpty(scope)) return { n: 0, terms: [] };
    const res = (await db.execute(termStatsSql(scope, question))) as unknown as { rows: Array<{ lexeme: string; df: number; n: number }> };
    return { n: res.rows[0]?.n ?? 0, terms: res.rows.map((r) => ({ lexeme: r.lexeme, df: r.df })) };
  }

  /** The best-matching chunks in scope of one step of a term choice (query.ts), best first. */
  async search(db: Executor, scope: ChunkScope, choice: TermChoice, step: Step, limit: number): Promise<ScoredChunk[]> {
    if (isEmpty(scope)) return [];
    return this.toChunks(db, (await db.execute(searchSql(scope, choice, step, limit))) as unknown as { rows: Row[] });
  }

  /** When nothing matches (a question of stop words, "summarise this"), the documents' opening chunks. */
  async leading(db: Executor, scope: ChunkScope, limit: number): Promise<ScoredChunk[]> {
    if (isEmpty(scope)) return [];
    return this.toChunks(db, (await db.execute(leadingSql(scope, limit))) as unknown as { rows: Row[] });
  }

  private async toChunks(db: Executor, res: { rows: Row[] }): Promise<ScoredChunk[]> {
    const missing = this.filenames.missing(res.rows.map((r) => r.file_id));
    if (missing.length > 0) {
      const found = (await db.execute(filenamesSql(missing))) as unknown as { rows: Array<{ id: string; filename: string }> };
      for (const f of found.rows) this.filenames.set(f.id, f.filename);
    }
    return res.rows.map((r) => ({
      id: Number(r.id),
      fileId: r.file_id,
      filename: this.filenames.get(r.file_id) ?? 'file',
      plusId: r.plus_id,
      text: r.text,
      tokenSize: r.token_size,
      score: Number(r.score),
    }));
  }

  /**
   * The chunks for a question: its lexemes' statistics (one query), the terms chosen from them
   * (chooseTerms), then one query per step of the choice until `limit` chunks are found (usually
   * the first); the opening chunks when the question has no word in scope or nothing matches.
   */
  async retrieve(db: Executor, scope: ChunkScope, question: string, limit: number): Promise<Retrieved> {
    if (isEmpty(scope)) return { chunks: [], choice: null, steps: 0, leading: false };
    return this.retrieveWith(db, scope, await this.termStats(db, scope, question), limit);
  }

  /** `retrieve` once the question's term statistics are known (e.g. from PlusRepo.findWithTerms). */
  async retrieveWith(db: Executor, scope: ChunkScope, stats: TermStats, limit: number): Promise<Retrieved> {
    if (isEmpty(scope)) return { chunks: [], choice: null, steps: 0, leading: false };
    const choice = chooseTerms(stats.terms, stats.n, this.termOptions);
    const chunks: ScoredChunk[] = [];
    let steps = 0;
    for (const step of choice?.steps ?? []) {
      if (chunks.length >= limit) break;
      chunks.push(...(await this.search(db, scope, choice!, step, limit - chunks.length)));
      steps++;
    }
    if (chunks.length > 0) return { chunks, choice, steps, leading: false };
    return { chunks: await this.leading(db, scope, limit), choice, steps, leading: true };
  }
}
