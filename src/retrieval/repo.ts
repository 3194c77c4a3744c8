import { sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../db/client.js';
import { rawRows } from '../db/raw.js';
import { BM25, BOOSTS, NEAR, TIE_DECIMALS } from './scoring.js';
import { indexTermStats, lexemesOfVector, orderHits, type EntryIndex, type Hit, type QuestionLexeme } from './lexical-index.js';
import { chooseTerms, quoteLexeme, TERM_OPTIONS, type Step, type TermChoice, type TermOptions, type TermPair, type TermStat } from './query.js';

export { BM25, BOOSTS } from './scoring.js';

/** A chunk's place in one ranked list: its score there and its 1-based rank. */
export interface RankIn {
  score: number;
  rank: number;
}

/** Where a chunk's final place comes from: each ranked list it was found in (null: not searched, or not found there). */
export interface Ranking {
  lexical: RankIn | null;
  vector: RankIn | null;
}

/**
 * A candidate chunk of a search, with what packing needs. `score` and `rank` are its final ones
 * (what orders the list); `ranking` says which ranked lists placed it where.
 */
export interface ScoredChunk {
  chunkId: number;
  fileId: string;
  /** the file's name, for the header packing puts above the chunk */
  filename: string;
  plusId: string;
  /** its section headings (plus_chunks.heading); null also until `hydrate` read them (text null) */
  heading: string | null;
  /** null: not read yet (the in-memory index ranks without texts; RetrievalRepo.hydrate reads those used) */
  text: string | null;
  tokenSize: number;
  score: number;
  rank: number;
  ranking: Ranking;
}

export interface ChunkScope {
  plusIds: string[];
  fileIds: string[];
}

/** What is searched for: the question, and for a follow-up in a thread the previous question (its key terms are carried). */
export interface Question {
  text: string;
  carry?: string | null;
}

/** Questions are cut to this many characters before their lexemes are taken (a pasted document stays cheap). */
export const MAX_QUESTION_CHARS = 10_000;

const uuidList = (ids: string[]) =>
  sql.join(
    ids.map((id) => sql`${id}::uuid`),
    sql`, `,
  );
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

/** The question's lexemes with their first position in it, and a follow-up's carried ones (position null). */
function questionLexemesSql(question: Question): SQL {
  const own = sql`select u.lexeme, u.positions[1]::int as pos, false as carried from unnest(to_tsvector('english', ${question.text.slice(0, MAX_QUESTION_CHARS)})) u`;
  if (!question.carry) return own;
  return sql`
    select lexeme, min(pos) as pos, bool_and(carried) as carried from (
      ${own}
      union all
      select u.lexeme, null, true from unnest(to_tsvector('english', ${question.carry.slice(0, MAX_QUESTION_CHARS)})) u
    ) q group by lexeme`;
}

/** The question's and the carried question's tsvectors in text form (RetrievalRepo.questionLexemes; $1 question, $2 carried or ''). */
const QUESTION_VECTORS = `select to_tsvector('english', $1::text)::text as own, to_tsvector('english', $2::text)::text as carried`;

/**
 * A question lexeme that no chunk in scope holds, of at least this many letters, stands for the
 * scope's commonest lexeme that begins with all of it but its last letter: spelling variants and
 * derived forms the English stemmer keeps apart ("licence" → licenc, found as licens). Shorter
 * lexemes are left alone (a prefix of four letters or fewer matches too much).
 */
export const PREFIX_MIN_CHARS = 6;

/**
 * The question's lexemes as found in the entries `inScope` selects (a condition on `t.plus_id`):
 * each with its document frequency summed over them, its first position in the question and
 * whether it was carried; a lexeme absent from them replaced by its prefix match
 * (PREFIX_MIN_CHARS) — one query, the prefix looked up as a range of plus_terms' primary key.
 * Rows: lexeme, df, pos, carried.
 */
function questionTermsSql(question: Question, inScope: SQL): SQL {
  const q = questionLexemesSql(question);
  return sql`
    select x.lexeme, coalesce(sum(x.df) filter (where not x.prefix), max(x.df))::int as df, min(x.pos) as pos, bool_and(x.carried) as carried
    from (
      select t.lexeme, t.df, q.pos, q.carried, false as prefix
      from plus_terms t join (${q}) q on q.lexeme = t.lexeme
      where ${inScope}
      union all
      select p.lexeme, p.df, q.pos, q.carried, true
      from (${q}) q
      cross join lateral (
        select t.lexeme, sum(t.df)::int as df
        from plus_terms t
        where ${inScope} and t.lexeme >= left(q.lexeme, -1) and t.lexeme < left(q.lexeme, -2) || chr(ascii(substr(q.lexeme, length(q.lexeme) - 1, 1)) + 1)
          and starts_with(t.lexeme, left(q.lexeme, -1))
        group by t.lexeme
        order by sum(t.df) desc, t.lexeme
        limit 1
      ) p
      where length(q.lexeme) >= ${PREFIX_MIN_CHARS} and q.lexeme ~ '^[a-z]+$'
        and not exists (select 1 from plus_terms t where ${inScope} and t.lexeme = q.lexeme)
    ) x
    group by x.lexeme`;
}

/**
 * One round trip: those of the question's lexemes (English stemming, stop words removed) that
 * occur in the scope's entries — or their prefix match (questionTermsSql) — with their document
 * frequency summed over them, their position in the question and whether they were carried from
 * a previous one; and on every row the scope's chunk count and token count (BM25's N and average
 * chunk length). A question with no such lexeme gives no row.
 */
export function termStatsSql(scope: ChunkScope, question: Question): SQL {
  return sql`
    select t.lexeme, t.df, t.pos, t.carried,
           (select coalesce(sum(e.chunk_count), 0) from plus_entries e where ${statsEntriesSql(scope, sql`e.id`)})::int as n,
           (select coalesce(sum(f.token_size), 0) from plus_files f where ${statsEntriesSql(scope, sql`f.plus_id`)})::float8 as tokens
    from (${questionTermsSql(question, statsEntriesSql(scope, sql`t.plus_id`))}) t`;
}

/**
 * For ONE entry (`entryId`, e.g. a column of an outer query): the question's lexemes that occur
 * in it (or their prefix match) as [lexeme, df, position in the question], and the entry's token
 * count — a scalar subquery, so that the entry's lookup and its term statistics take one round
 * trip (PlusRepo.findWithTerms).
 */
export function entryTermsSql(entryId: SQL, question: string): SQL {
  return sql`json_build_object(
    'terms', (
      select coalesce(json_agg(json_build_array(t.lexeme, t.df, t.pos)), '[]'::json)
      from (${questionTermsSql({ text: question }, sql`t.plus_id = ${entryId}`)}) t),
    'tokens', (select coalesce(sum(f.token_size), 0) from plus_files f where f.plus_id = ${entryId}))`;
}

/** The value of entryTermsSql. */
export function parseEntryTerms(v: unknown): { terms: TermStat[]; tokens: number } {
  const o = (typeof v === 'string' ? JSON.parse(v) : v) as { terms: Array<[string, number, number | null]> | null; tokens: number | string | null } | null;
  return {
    terms: (o?.terms ?? []).map(([lexeme, df, pos]) =>
      pos === null || pos === undefined ? { lexeme, df: Number(df) } : { lexeme, df: Number(df), pos: Number(pos) },
    ),
    tokens: Number(o?.tokens ?? 0),
  };
}

/**
 * A lexeme's occurrences in a chunk's text (weight D of plus_chunks.search; its headings, weight A,
 * not counted), read in C without unnesting the vector: for ONE lexeme, with weight 1 for D
 * positions and 0 for the others, PostgreSQL's ts_rank (normalisation 0) is
 * Σ_{j=1..tf} 1/j² ÷ π²/6 — 1 − that is about 6/(π²(tf + ½)), so tf is recovered exactly by
 * rounding 6/(π²(1 − rank)) − ½ (0 when the lexeme is only in the headings). The ranking tests
 * check it on both databases.
 */
export function bodyTf(vector: SQL, quotedLexeme: string): SQL {
  return sql`round(1 / (1.6449340668482264 * (1 - ts_rank('{1,0,0,0}'::float4[], ${vector}, cast(${quotedLexeme} as tsquery), 0)::float8)) - 0.5)`;
}

/** tsquery literals: a pair as found in the question, and near each other in either order. */
function pairQueries(p: TermPair): { phrase: string; near: string } {
  const a = quoteLexeme(p.a);
  const b = quoteLexeme(p.b);
  const near: string[] = [];
  for (let k = 1; k <= NEAR; k++) near.push(`${a} <${k}> ${b}`, `${b} <${k}> ${a}`);
  return { phrase: `${a} <${Math.max(1, p.distance)}> ${b}`, near: near.join(' | ') };
}

/**
 * The best chunks in scope of one step of a term choice, best first. The candidates are the
 * chunks matching the step's tsquery (GIN index); each is scored, in SQL, with BM25 over its text
 * — for each ranking lexeme it holds, idf × tf(k1 + 1) / (tf + k1(1 − b + b·len/avglen)), tf its
 * occurrences in the text (weight D of the tsvector), len the chunk's tokens — plus the boosts
 * (BOOSTS): the lexeme in the chunk's headings (weight A), neighbouring lexemes of the question as
 * a phrase or near each other. Equal scores are ordered by how many better chunks of the same file
 * come first (diversity: another file's best before a file's second), then the shorter chunk, and
 * only then the chunk id.
 */
export function searchSql(scope: ChunkScope, choice: TermChoice, step: Step, limit: number, avgLen: number): SQL {
  const { k1, b } = BM25;
  // len/avglen; without a known average (no token counts) no length normalisation
  const norm = avgLen > 0 ? sql`(${k1}::float8 * (1 - ${b}::float8 + ${b}::float8 * m.token_size / ${avgLen}::float8))` : sql`${k1}::float8`;
  const pairs = choice.pairs.map((p) => {
    const q = pairQueries(p);
    return sql` + ${p.idf}::float8 * (case when m.search @@ cast(${q.phrase} as tsquery) then ${BOOSTS.phrase}::float8 when m.search @@ cast(${q.near} as tsquery) then ${BOOSTS.near}::float8 else 0 end)`;
  });
  // Per ranking lexeme: tf, its occurrences in the text (bodyTf), and whether the headings hold it.
  const terms = choice.rank.map((l, i) => {
    const q = quoteLexeme(l);
    const tf = bodyTf(sql`m.search`, q);
    return sql`${choice.idf[i]}::float8 * (${tf} * ${k1 + 1}::float8 / (${tf} + ${norm}) + case when m.search @@ cast(${`${q}:A`} as tsquery) then ${BOOSTS.heading}::float8 else 0 end)`;
  });
  return sql`
    with m as (
      select c.id, c.file_id, c.plus_id, c.token_size, c.search
      from plus_chunks c
      where c.search @@ cast(${step.match} as tsquery) and ${scopeSql(scope)}
    ), s as (
      select m.id, m.file_id, m.plus_id, m.token_size,
             ${sql.join(terms, sql` + `)}${sql.join(pairs, sql``)} as score
      from m
    ), r as (
      select s.*, row_number() over (partition by s.file_id order by s.score desc, s.token_size, s.id) as in_file
      from s
    )
    select r.id, r.file_id, r.plus_id, c.file_data_processed as text, r.token_size, c.heading, r.score
    from (select * from r order by round(r.score::numeric, ${TIE_DECIMALS}) desc, r.in_file, r.token_size, r.id limit ${limit}) r
    join plus_chunks c on c.id = r.id
    order by round(r.score::numeric, ${TIE_DECIMALS}) desc, r.in_file, r.token_size, r.id`;
}

/** The documents' opening chunks. */
export function leadingSql(scope: ChunkScope, limit: number): SQL {
  return sql`
    select c.id, c.file_id, c.plus_id, c.file_data_processed as text, c.token_size, c.heading, 0 as score
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

type Row = { id: number | string; file_id: string; plus_id: string; text: string; token_size: number; heading: string | null; score: number | string };

export interface TermStats {
  /** chunks of the entries in scope */
  n: number;
  /** tokens of those chunks (0: unknown — no length normalisation) */
  tokens?: number;
  terms: TermStat[];
}

export interface Retrieved {
  /** best first; score and rank are the lexical ones (the only list, until vectors are fused in) */
  chunks: ScoredChunk[];
  /** the question's term statistics the choice was made from */
  stats: TermStats;
  /** the terms searched for (null: the question has no word that occurs in scope) */
  choice: TermChoice | null;
  /** how many of the choice's steps were run */
  steps: number;
  /** the opening chunks were used: nothing matched */
  leading: boolean;
}

/** Full-text search over chunk text and headings: IDF-style term choice (query.ts), GIN index, BM25 in SQL. */
export class RetrievalRepo {
  readonly filenames = new FilenameCache();

  constructor(private readonly termOptions: Readonly<TermOptions> = TERM_OPTIONS) {}

  async termStats(db: Executor, scope: ChunkScope, question: Question): Promise<TermStats> {
    if (isEmpty(scope)) return { n: 0, terms: [] };
    const res = (await db.execute(termStatsSql(scope, question))) as unknown as {
      rows: Array<{ lexeme: string; df: number; pos: number | null; carried: boolean; n: number; tokens: number | string }>;
    };
    return {
      n: res.rows[0]?.n ?? 0,
      tokens: Number(res.rows[0]?.tokens ?? 0),
      terms: res.rows.map((r) => ({ lexeme: r.lexeme, df: r.df, ...(r.pos === null ? {} : { pos: Number(r.pos) }), ...(r.carried ? { carried: true } : {}) })),
    };
  }

  /** The best-matching chunks in scope of one step of a term choice (query.ts), best first. */
  async search(db: Executor, scope: ChunkScope, choice: TermChoice, step: Step, limit: number, avgLen = 0): Promise<ScoredChunk[]> {
    if (isEmpty(scope)) return [];
    return this.toChunks(db, (await db.execute(searchSql(scope, choice, step, limit, avgLen))) as unknown as { rows: Row[] });
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
      chunkId: Number(r.id),
      fileId: r.file_id,
      filename: this.filenames.get(r.file_id) ?? 'file',
      plusId: r.plus_id,
      heading: r.heading ?? null,
      text: r.text,
      tokenSize: r.token_size,
      score: Number(r.score),
      rank: 0,
      ranking: { lexical: null, vector: null },
    }));
  }

  /**
   * The chunks for a question: its lexemes' statistics (one query), the terms chosen from them
   * (chooseTerms), then lexicalSearch.
   */
  async retrieve(db: Executor, scope: ChunkScope, question: string | Question, limit: number): Promise<Retrieved> {
    if (isEmpty(scope)) return { chunks: [], stats: { n: 0, terms: [] }, choice: null, steps: 0, leading: false };
    return this.lexicalSearch(db, scope, await this.termStats(db, scope, typeof question === 'string' ? { text: question } : question), limit);
  }

  /** `retrieve` once the question's term statistics are known (e.g. from PlusRepo.findWithTerms). */
  async retrieveWith(db: Executor, scope: ChunkScope, stats: TermStats, limit: number): Promise<Retrieved> {
    return this.lexicalSearch(db, scope, stats, limit);
  }

  /**
   * THE lexical ranked list (what a fusion with other ranked lists takes its top K from): the
   * terms chosen from the statistics, one search query per step of the choice until `limit`
   * chunks are found (usually the first), best first, each with `rank` (1-based) and
   * `ranking.lexical` set; the opening chunks (score 0) when the question has no word in scope
   * or nothing matches.
   */
  async lexicalSearch(db: Executor, scope: ChunkScope, stats: TermStats, limit: number): Promise<Retrieved> {
    if (isEmpty(scope)) return { chunks: [], stats, choice: null, steps: 0, leading: false };
    return this.stepwise(db, scope, stats, limit, (choice, step, want, avgLen) => this.search(db, scope, choice, step, want, avgLen));
  }

  /**
   * The steps of the term choice made from `stats`, each run by `runStep` for the chunks still
   * wanted, until `limit` are found; then ranks set (`ranked`).
   */
  private async stepwise(
    db: Executor,
    scope: ChunkScope,
    stats: TermStats,
    limit: number,
    runStep: (choice: TermChoice, step: Step, want: number, avgLen: number) => ScoredChunk[] | Promise<ScoredChunk[]>,
  ): Promise<Retrieved> {
    const choice = chooseTerms(stats.terms, stats.n, this.termOptions);
    const avgLen = stats.n > 0 && stats.tokens ? stats.tokens / stats.n : 0;
    const chunks: ScoredChunk[] = [];
    let steps = 0;
    for (const step of choice?.steps ?? []) {
      if (chunks.length >= limit) break;
      chunks.push(...(await runStep(choice!, step, limit - chunks.length, avgLen)));
      steps++;
    }
    return this.ranked(db, scope, stats, choice, chunks, steps, limit);
  }

  /** The lexical list's ranks set, or the opening chunks when it is empty. */
  private async ranked(
    db: Executor,
    scope: ChunkScope,
    stats: TermStats,
    choice: TermChoice | null,
    chunks: ScoredChunk[],
    steps: number,
    limit: number,
  ): Promise<Retrieved> {
    const leading = chunks.length === 0;
    const list = leading ? await this.leading(db, scope, limit) : chunks;
    list.forEach((c, i) => {
      c.rank = i + 1;
      c.ranking = { lexical: { score: c.score, rank: i + 1 }, vector: null };
    });
    return { chunks: list, stats, choice, steps, leading };
  }

  /**
   * The question's lexemes (to_tsvector, English) for a search of in-memory indexes, one
   * statement: as questionLexemesSql gives them — each with its first position in the question,
   * then a follow-up's carried lexemes the question lacks (position null, carried) — read from
   * the tsvectors' text as PlusRepo.findWithLexemes reads them.
   */
  async questionLexemes(db: Executor, question: Question): Promise<QuestionLexeme[]> {
    const [row] = await rawRows<{ own: string; carried: string }>(db, QUESTION_VECTORS, [
      question.text.slice(0, MAX_QUESTION_CHARS),
      (question.carry ?? '').slice(0, MAX_QUESTION_CHARS),
    ]);
    const own = lexemesOfVector(row?.own ?? '');
    const has = new Set(own.map((l) => l.lexeme));
    const carried = lexemesOfVector(row?.carried ?? '').filter((l) => !has.has(l.lexeme));
    return [...own, ...carried.map((l) => ({ lexeme: l.lexeme, pos: null, carried: true }))];
  }

  /**
   * lexicalSearch over the entries' in-memory indexes (current ones: `n` is their chunk count):
   * the same term choice, candidates, scores and order as SQL, with no statement unless nothing
   * matches (the opening chunks are read). The chunks come without their texts (`hydrate`).
   */
  async searchIndexes(db: Executor, indexes: readonly EntryIndex[], n: number, lexemes: readonly QuestionLexeme[], limit: number): Promise<Retrieved> {
    const stats: TermStats = { n, tokens: indexes.reduce((t, i) => t + i.tokens, 0), terms: indexTermStats(indexes, lexemes) };
    const scope = { plusIds: indexes.map((i) => i.plusId), fileIds: [] };
    return this.stepwise(db, scope, stats, limit, (choice, step, want, avgLen) => {
      const hits: Hit[] = [];
      for (const idx of indexes) idx.candidates(choice, step, avgLen, hits);
      return orderHits(hits, want).map((h) => h.index.chunk(h));
    });
  }

  /**
   * Read the texts and headings of those of `chunks` that come without them (one statement).
   * Returns the ids of those no longer stored (their file was deleted since the search).
   */
  async hydrate(db: Executor, chunks: readonly ScoredChunk[]): Promise<Set<number>> {
    const gone = new Set<number>();
    const missing = chunks.filter((c) => c.text === null);
    if (missing.length === 0) return gone;
    // past drizzle (db/raw.ts): it runs on every search of an in-memory index
    const rows = await rawRows<{ id: number | string; text: string; heading: string | null }>(
      db,
      'select c.id, c.file_data_processed as text, c.heading from plus_chunks c where c.id = any($1::bigint[])',
      [`{${missing.map((c) => c.chunkId).join(',')}}`],
    );
    const byId = new Map(rows.map((r) => [Number(r.id), r]));
    for (const c of missing) {
      const r = byId.get(c.chunkId);
      if (!r) gone.add(c.chunkId);
      else {
        c.text = r.text;
        c.heading = r.heading;
      }
    }
    return gone;
  }
}
