import { sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../db/client.js';
import { execute, rawRows } from '../db/driver.js';
import { indexTermStats } from './lexical-index/term-stats.js';
import type { EntryIndex } from './lexical-index/entry-index.js';
import { lexemesOfVector, type QuestionLexeme } from './lexical-index/question-lexemes.js';
import { chooseTerms, TERM_OPTIONS, type Step, type TermChoice, type TermOptions, type TermStat } from './query.js';
import { rankScored, scoreOf, type Scored } from './score.js';
import {
  candidatesSql,
  featuresOf,
  featuresSql,
  filenamesSql,
  idSpanSql,
  isEmptyScope,
  leadingSql,
  MAX_QUESTION_CHARS,
  QUESTION_VECTORS,
  termStatsSql,
  type ChunkScope,
  type FeatureRow,
  type IdWindow,
  type Question,
} from './search-sql.js';

/**
 * In a scope of more than `splitAbove` chunks, a search step's features are read `batch`
 * candidates per statement: one statement over a 100,000-chunk entry's candidates took
 * 0.1–0.25 s here, and the embedded database has one connection, so every other query waited.
 * Their ids are read first, in windows of chunk ids when a step may find more than `window`
 * candidates (the sum over its clauses of their rarest lexeme's df): about `window` each, ~20 ms
 * on the embedded database where one statement over 5,000 candidates took 0.1 s, each a row
 * read. Windows are used only when the planner intersects them with the GIN index's matches
 * (`windowsIfPlanned`; search-statistics.ts gives it the statistics it needs); otherwise each
 * would visit every candidate, and the ids are read in one statement.
 */
export const FEATURE_READS = { splitAbove: 20_000, batch: 50, window: 500, windowsIfPlanned: true };

/** At most how many candidates a step can find: per clause, its rarest lexeme's df (`n` for a lexeme without one). */
function expectedCandidates(step: Step, df: ReadonlyMap<string, number>, n: number): number {
  let sum = 0;
  for (const clause of step.clauses) sum += Math.min(n, ...clause.map((l) => df.get(l) ?? n));
  return Math.min(n, sum);
}

/** Whether the plan of `query` intersects two bitmap index scans (a window's id range with the GIN index's matches). */
async function intersects(db: Executor, query: SQL): Promise<boolean> {
  const { rows } = await execute<Record<string, unknown>>(db, sql`explain (format json) ${query}`);
  const plan = Object.values(rows[0] ?? {})[0];
  return /"Node Type":\s*"BitmapAnd"/.test(typeof plan === 'string' ? plan : JSON.stringify(plan));
}

/** A chunk's place in one ranked list: its score there and its 1-based rank. */
export interface RankIn {
  score: number;
  rank: number;
}

/** Where a chunk's final place comes from: each ranked list it was found in (null: not searched, or not found there). */
export interface Ranking {
  lexical: RankIn | null;
  vector: RankIn | null;
  /** the team's rerank model's order of the best candidates (absent: no rerank model, or beyond them) */
  rerank?: RankIn | null;
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

type Row = { id: number | string; file_id: string; plus_id: string; text: string | null; token_size: number; heading: string | null; score: number | string };

export interface TermStats {
  /** chunks of the entries in scope */
  n: number;
  /** tokens of those chunks (0: unknown — no length normalisation) */
  tokens?: number;
  /** files of those entries (0: unknown — no file-length prior, FILE_PRIOR) */
  files?: number;
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

/**
 * What a lexical search runs over, and what is known of the question already:
 * - `scope` and `question`: SQL, the question's term statistics read first (one statement);
 * - `scope` and `stats`: SQL, the statistics read already (PlusRepo.findWithTerms, with the entry);
 * - `indexes`, current in-memory indexes of entries of `teamId` (`n`: their chunks), and the
 *   question's `lexemes` (PlusRepo.findWithLexemes, with the entry) or the `question` (its
 *   lexemes read in one statement).
 */
export type LexicalRequest =
  | { scope: ChunkScope; question: Question }
  | { scope: ChunkScope; stats: TermStats }
  | { teamId: string; indexes: readonly EntryIndex[]; n: number; lexemes: readonly QuestionLexeme[] }
  | { teamId: string; indexes: readonly EntryIndex[]; n: number; question: Question };

/** Full-text search over chunk text and headings: IDF-style term choice (query.ts), candidates and features from SQL (GIN index) or in-memory indexes, one scorer (score.ts). */
export class RetrievalRepo {
  readonly filenames = new FilenameCache();

  constructor(
    private readonly termOptions: Readonly<TermOptions> = TERM_OPTIONS,
    private readonly featureReads: Readonly<typeof FEATURE_READS> = FEATURE_READS,
  ) {}

  /** The question's term statistics in scope (one statement; `search` reads them when not given). */
  async termStats(db: Executor, scope: ChunkScope, question: Question): Promise<TermStats> {
    if (isEmptyScope(scope)) return { n: 0, terms: [] };
    const res = await execute<{ lexeme: string; df: number; pos: number | null; carried: boolean; n: number; tokens: number | string; files: number }>(
      db,
      termStatsSql(scope, question),
    );
    return {
      n: res.rows[0]?.n ?? 0,
      tokens: Number(res.rows[0]?.tokens ?? 0),
      files: Number(res.rows[0]?.files ?? 0),
      terms: res.rows.map((r) => ({ lexeme: r.lexeme, df: r.df, ...(r.pos === null ? {} : { pos: Number(r.pos) }), ...(r.carried ? { carried: true } : {}) })),
    };
  }

  /**
   * The best chunks in scope of one step of a term choice (query.ts), best first: the step's
   * candidates with their features read in SQL (featuresSql), scored and ordered by score.ts;
   * without their texts and headings (`hydrate`). In a large scope (FEATURE_READS) the candidates'
   * ids are read first, then their features a batch at a time, through `bulk` (Database.bulk): the
   * same rows, in statements short enough that other queries (a chat turn's) run between them.
   */
  private async searchStep(
    db: Executor,
    bulk: Executor,
    scope: ChunkScope,
    choice: TermChoice,
    step: Step,
    limit: number,
    avgLen: number,
    avgFile: number,
    chunksInScope: number,
    df: ReadonlyMap<string, number>,
  ): Promise<ScoredChunk[]> {
    const rows: FeatureRow[] = [];
    if (chunksInScope <= this.featureReads.splitAbove) rows.push(...(await execute<FeatureRow>(db, featuresSql(scope, choice, step, avgFile > 0))).rows);
    else {
      const ids = await this.candidateIds(bulk, scope, step, expectedCandidates(step, df, chunksInScope));
      for (let at = 0; at < ids.length; at += this.featureReads.batch) {
        const batch = ids.slice(at, at + this.featureReads.batch);
        rows.push(...(await execute<FeatureRow>(bulk, featuresSql(scope, choice, step, avgFile > 0, batch))).rows);
      }
    }
    const scored = rows.map((r) => {
      const f = featuresOf(r, choice.rank.length, choice.pairs.length);
      return { ...f, score: scoreOf(f, choice, avgLen, avgFile) };
    });
    const top = rankScored(scored, limit);
    return this.toChunks(
      db,
      top.map((c) => ({ id: c.chunkId, file_id: c.fileId, plus_id: c.plusId, text: null, token_size: c.tokenSize, heading: null, score: c.score })),
    );
  }

  /**
   * A large step's candidates' ids (FEATURE_READS): in windows of the scope's chunk ids of about
   * `window` expected candidates each when it may find more and the planner intersects a window
   * with the GIN index's matches, else in one statement.
   */
  private async candidateIds(bulk: Executor, scope: ChunkScope, step: Step, expected: number): Promise<string[]> {
    const idsOf = async (query: SQL) => (await execute<{ id: number | string }>(bulk, query)).rows.map((r) => String(r.id));
    const { window, windowsIfPlanned } = this.featureReads;
    if (window <= 0 || expected <= window) return idsOf(candidatesSql(scope, step));
    const span = (await execute<{ lo: string | null; hi: string | null }>(bulk, idSpanSql(scope))).rows[0];
    if (!span?.lo || !span.hi) return [];
    const [lo, hi] = [Number(span.lo), Number(span.hi)];
    const width = Math.ceil((hi - lo + 1) / Math.ceil(expected / window));
    const windows: IdWindow[] = [];
    for (let from = lo; from <= hi; from += width) windows.push({ from, to: Math.min(hi, from + width - 1) });
    if (windowsIfPlanned && !(await intersects(bulk, candidatesSql(scope, step, windows[0])))) return idsOf(candidatesSql(scope, step));
    const ids: string[] = [];
    for (const w of windows) ids.push(...(await idsOf(candidatesSql(scope, step, w))));
    return ids;
  }

  /** When nothing matches (a question of stop words, "summarise this"), the documents' opening chunks. */
  async leading(db: Executor, scope: ChunkScope, limit: number): Promise<ScoredChunk[]> {
    if (isEmptyScope(scope)) return [];
    return this.toChunks(db, (await execute<Row>(db, leadingSql(scope, limit))).rows);
  }

  private async toChunks(db: Executor, rows: Row[]): Promise<ScoredChunk[]> {
    const missing = this.filenames.missing(rows.map((r) => r.file_id));
    if (missing.length > 0) {
      const found = await execute<{ id: string; filename: string }>(db, filenamesSql(missing));
      for (const f of found.rows) this.filenames.set(f.id, f.filename);
    }
    return rows.map((r) => ({
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
   * THE lexical ranked list (what a fusion with other ranked lists takes its top K from): the
   * terms chosen from the question's statistics (chooseTerms), then per step of the choice, until
   * `limit` chunks are found (usually in the first), its candidates with their features — from
   * SQL or from in-memory indexes (`request`) — scored and ordered by score.ts; best first, each
   * with `rank` (1-based) and `ranking.lexical` set, without texts (`hydrate`); the opening
   * chunks (score 0) when the question has no word in scope or nothing matches.
   */
  async search(db: Executor, request: LexicalRequest, limit: number, bulk: Executor = db): Promise<Retrieved> {
    if ('indexes' in request) {
      const lexemes = 'lexemes' in request ? request.lexemes : await this.questionLexemes(db, request.question);
      return this.searchIndexes(db, request.teamId, request.indexes, request.n, lexemes, limit);
    }
    const { scope } = request;
    if (isEmptyScope(scope)) return { chunks: [], stats: 'stats' in request ? request.stats : { n: 0, terms: [] }, choice: null, steps: 0, leading: false };
    const stats = 'stats' in request ? request.stats : await this.termStats(db, scope, request.question);
    const df = new Map(stats.terms.map((t) => [t.lexeme, t.df]));
    return this.stepwise(db, scope, stats, limit, (choice, step, want, avgLen, avgFile) =>
      this.searchStep(db, bulk, scope, choice, step, want, avgLen, avgFile, stats.n, df),
    );
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
    runStep: (choice: TermChoice, step: Step, want: number, avgLen: number, avgFile: number) => ScoredChunk[] | Promise<ScoredChunk[]>,
  ): Promise<Retrieved> {
    const choice = chooseTerms(stats.terms, stats.n, this.termOptions);
    const avgLen = stats.n > 0 && stats.tokens ? stats.tokens / stats.n : 0;
    const avgFile = stats.files && stats.tokens ? stats.tokens / stats.files : 0;
    const chunks: ScoredChunk[] = [];
    let steps = 0;
    for (const step of choice?.steps ?? []) {
      if (chunks.length >= limit) break;
      chunks.push(...(await runStep(choice!, step, limit - chunks.length, avgLen, avgFile)));
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
   * `search` over the entries' in-memory indexes (current ones: `n` is their chunk count): the
   * same term choice, candidates and features as SQL, with no statement unless nothing matches
   * (the opening chunks are read).
   */
  private async searchIndexes(
    db: Executor,
    teamId: string,
    indexes: readonly EntryIndex[],
    n: number,
    lexemes: readonly QuestionLexeme[],
    limit: number,
  ): Promise<Retrieved> {
    const stats: TermStats = {
      n,
      tokens: indexes.reduce((t, i) => t + i.tokens, 0),
      files: indexes.reduce((t, i) => t + i.files.length, 0),
      terms: indexTermStats(indexes, lexemes),
    };
    const scope = { teamId, plusIds: indexes.map((i) => i.plusId), fileIds: [] };
    return this.stepwise(db, scope, stats, limit, (choice, step, want, avgLen, avgFile) => {
      const hits: Array<Scored & { index: EntryIndex; slot: number }> = [];
      for (const index of indexes)
        index.candidates(choice, step, (f, slot) =>
          hits.push({ index, slot, chunkId: f.chunkId, fileId: f.fileId, tokenSize: f.tokenSize, score: scoreOf(f, choice, avgLen, avgFile) }),
        );
      return rankScored(hits, want).map((h) => h.index.chunk(h.slot, h.score));
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
    // past drizzle (db/driver.ts): it runs on every search of an in-memory index
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
