/**
 * The lexical search as SQL: what a scope and a question are, the question's term statistics
 * (one round trip, prefix matches included), and the candidates of one step of a term choice
 * with their features — the statements RetrievalRepo runs (the scoring is score.ts).
 */
import { sql, type SQL } from 'drizzle-orm';
import { storingFilesOf } from '../db/schema/plus.js';
import { NEAR_HIT, PHRASE, type Features } from './score.js';
import { DERIVED_MAX_CUT, NEAR, PREFIX_MIN_CHARS, STEM_MIN_CHARS } from './scoring.js';
import { quoteLexeme, type Step, type TermChoice, type TermPair, type TermStat } from './query.js';

export interface ChunkScope {
  /** the team whose entries (and files) these are: ids are unique per team only */
  teamId: string;
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
export const isEmptyScope = (s: ChunkScope) => s.plusIds.length === 0 && s.fileIds.length === 0;

function scopeSql(s: ChunkScope): SQL {
  const parts = [];
  if (s.plusIds.length > 0) parts.push(sql`c.plus_id in (${uuidList(s.plusIds)})`);
  if (s.fileIds.length > 0) parts.push(sql`c.file_id in (${uuidList(s.fileIds)})`);
  return sql`(c.team_id = ${s.teamId}::uuid and (${sql.join(parts, sql` or `)}) and c.file_id <> all(${storingFilesOf(sql`${s.teamId}::uuid`)}))`;
}

/**
 * The entries whose statistics stand for the scope (`col` in them): its entries, and the entries
 * of its files. A scope's files (a thread's files) are searched alone, but their term statistics
 * are those of their whole entries — an approximation that keeps one df table per entry.
 */
function statsEntriesSql(s: ChunkScope, teamCol: SQL, col: SQL): SQL {
  const parts = [];
  if (s.plusIds.length > 0) parts.push(sql`${col} in (${uuidList(s.plusIds)})`);
  if (s.fileIds.length > 0)
    parts.push(sql`${col} in (select f.plus_id from plus_files f where f.team_id = ${s.teamId}::uuid and f.id in (${uuidList(s.fileIds)}))`);
  return sql`(${teamCol} = ${s.teamId}::uuid and (${sql.join(parts, sql` or `)}))`;
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
export const QUESTION_VECTORS = `select to_tsvector('english', $1::text)::text as own, to_tsvector('english', $2::text)::text as carried`;

/**
 * The question's lexemes as found in the entries `inScope` selects (a condition on `t.plus_id`):
 * each with its document frequency summed over them, its first position in the question and
 * whether it was carried; a lexeme absent from them replaced by its prefix match
 * (PREFIX_MIN_CHARS: the commonest lexeme beginning with all of it but its last letter, else the
 * longest lexeme it begins with that is at most 3 letters shorter and of at least
 * STEM_MIN_CHARS) — one query, each looked up in plus_terms' primary key.
 * Rows: lexeme, df, pos, carried.
 */
function questionTermsSql(question: Question, inScope: SQL): SQL {
  const q = questionLexemesSql(question);
  const derivedStems = sql.join(
    Array.from({ length: DERIVED_MAX_CUT }, (_, k) => sql`left(q.lexeme, ${-(k + 1)}::int)`),
    sql`, `,
  );
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
        select c.lexeme, c.df from (
          (select t.lexeme, sum(t.df)::int as df, 0 as kind
           from plus_terms t
           where ${inScope} and t.lexeme >= left(q.lexeme, -1) and t.lexeme < left(q.lexeme, -2) || chr(ascii(substr(q.lexeme, length(q.lexeme) - 1, 1)) + 1)
             and starts_with(t.lexeme, left(q.lexeme, -1))
           group by t.lexeme
           order by sum(t.df) desc, t.lexeme
           limit 1)
          union all
          (select t.lexeme, sum(t.df)::int, 1
           from plus_terms t
           where ${inScope} and t.lexeme in (${derivedStems}) and length(t.lexeme) >= ${STEM_MIN_CHARS}::int
           group by t.lexeme
           order by length(t.lexeme) desc
           limit 1)
        ) c
        order by c.kind
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
 * a previous one; and on every row the scope's chunk count, token count and file count (BM25's N
 * and average chunk length, the average file length of FILE_PRIOR). A question with no such lexeme gives no row.
 */
export function termStatsSql(scope: ChunkScope, question: Question): SQL {
  return sql`
    select t.lexeme, t.df, t.pos, t.carried,
           (select coalesce(sum(e.chunk_count), 0) from plus_entries e where ${statsEntriesSql(scope, sql`e.team_id`, sql`e.id`)})::int as n,
           (select coalesce(sum(f.token_size), 0) from plus_files f where ${statsEntriesSql(scope, sql`f.team_id`, sql`f.plus_id`)} and not f.storing)::float8 as tokens,
           (select count(*) from plus_files f where ${statsEntriesSql(scope, sql`f.team_id`, sql`f.plus_id`)} and not f.storing)::int as files
    from (${questionTermsSql(question, statsEntriesSql(scope, sql`t.team_id`, sql`t.plus_id`))}) t`;
}

/**
 * For ONE entry (`teamId` and `entryId`, e.g. columns of an outer query): the question's lexemes that occur
 * in it (or their prefix match) as [lexeme, df, position in the question], and the entry's token
 * and file counts — a scalar subquery, so that the entry's lookup and its term statistics take one round
 * trip (PlusRepo.findWithTerms).
 */
export function entryTermsSql(teamId: SQL, entryId: SQL, question: string): SQL {
  return sql`json_build_object(
    'terms', (
      select coalesce(json_agg(json_build_array(t.lexeme, t.df, t.pos)), '[]'::json)
      from (${questionTermsSql({ text: question }, sql`t.team_id = ${teamId} and t.plus_id = ${entryId}`)}) t),
    'tokens', (select coalesce(sum(f.token_size), 0) from plus_files f where f.team_id = ${teamId} and f.plus_id = ${entryId} and not f.storing),
    'files', (select count(*) from plus_files f where f.team_id = ${teamId} and f.plus_id = ${entryId} and not f.storing))`;
}

/** The value of entryTermsSql. */
export function parseEntryTerms(v: unknown): { terms: TermStat[]; tokens: number; files: number } {
  const o = (typeof v === 'string' ? JSON.parse(v) : v) as {
    terms: Array<[string, number, number | null]> | null;
    tokens: number | string | null;
    files?: number | string | null;
  } | null;
  return {
    terms: (o?.terms ?? []).map(([lexeme, df, pos]) =>
      pos === null || pos === undefined ? { lexeme, df: Number(df) } : { lexeme, df: Number(df), pos: Number(pos) },
    ),
    tokens: Number(o?.tokens ?? 0),
    files: Number(o?.files ?? 0),
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

/** A row of featuresSql: the chunk, `t0`… its tf per ranking lexeme, `h` its heading bits, `p0`… its pairs (score.ts Features). */
export type FeatureRow = Record<string, number | string> & {
  id: number | string;
  file_id: string;
  plus_id: string;
  token_size: number;
  file_tokens: number | string;
};

/**
 * The candidates in scope of one step of a term choice — the chunks matching the step's tsquery
 * (GIN index) — each with its features (score.ts, `Features`): per ranking lexeme its
 * occurrences in the text (`t<i>`, bodyTf) and whether the headings (weight A) hold it (bit i of
 * `h`); per neighbouring pair of the question (`p<k>`) PHRASE when found as in the question, NEAR_HIT
 * when near each other, else 0; the chunk's and (with `fileTokens`) its file's tokens. No score:
 * the scorer ranks them, as it ranks the in-memory index's. With `ids`, only those of them
 * (candidatesSql's, a batch at a time).
 */
export function featuresSql(scope: ChunkScope, choice: TermChoice, step: Step, fileTokens: boolean, ids?: string[]): SQL {
  const tfs = choice.rank.map((l, i) => sql`, ${bodyTf(sql`c.search`, quoteLexeme(l))}::int as ${sql.raw(`t${i}`)}`);
  const heads = choice.rank.map((l, i) => sql`case when c.search @@ cast(${`${quoteLexeme(l)}:A`} as tsquery) then ${2 ** i}::int else 0 end`);
  const pairs = choice.pairs.map((p, k) => {
    const q = pairQueries(p);
    return sql`, case when c.search @@ cast(${q.phrase} as tsquery) then ${PHRASE}::int when c.search @@ cast(${q.near} as tsquery) then ${NEAR_HIT}::int else 0 end as ${sql.raw(`p${k}`)}`;
  });
  // Given ids, the rows are looked up by them first (OFFSET 0 keeps the planner from merging the
  // subquery): it estimates 2 rows for an AND of two terms' @@ (no statistics on `search`), so it
  // took the GIN index and visited every candidate in each batch (64 ms for 100 of 5,000).
  const chunks = ids ? sql`(select * from plus_chunks c where c.id = any(string_to_array(${ids.join(',')}, ',')::bigint[]) offset 0)` : sql`plus_chunks`;
  return sql`
    select c.id, c.file_id, c.plus_id, c.token_size, ${fileTokens ? sql`f.token_size` : sql`0`} as file_tokens${sql.join(tfs, sql``)}, ${sql.join(heads, sql` + `)} as h${sql.join(pairs, sql``)}
    from ${chunks} c${fileTokens ? sql` join plus_files f on f.id = c.file_id` : sql``}
    where c.search @@ cast(${step.match} as tsquery) and ${scopeSql(scope)}`;
}

/** A range of chunk ids, both ends included. */
export interface IdWindow {
  from: number;
  to: number;
}

/** The ids of featuresSql's candidates (no features: the GIN index and the rows' visibility only), or of those in `window`. */
export function candidatesSql(scope: ChunkScope, step: Step, window?: IdWindow): SQL {
  const within = window ? sql` and c.id between ${window.from} and ${window.to}` : sql``;
  return sql`select c.id from plus_chunks c where c.search @@ cast(${step.match} as tsquery) and ${scopeSql(scope)}${within}`;
}

/**
 * The least and greatest chunk id of the scope's entries, and of its files' entries (text: ids
 * are bigint): two descents of plus_chunks_plus_idx per entry. Rows: lo, hi (null: no chunk).
 */
export function idSpanSql(s: ChunkScope): SQL {
  const entries = [];
  if (s.plusIds.length > 0) entries.push(sql`select unnest(array[${uuidList(s.plusIds)}]) as plus_id`);
  if (s.fileIds.length > 0) entries.push(sql`select f.plus_id from plus_files f where f.team_id = ${s.teamId}::uuid and f.id in (${uuidList(s.fileIds)})`);
  return sql`
    select min(w.lo)::text as lo, max(w.hi)::text as hi
    from (${sql.join(entries, sql` union `)}) e,
      lateral (select min(c.id) as lo, max(c.id) as hi from plus_chunks c where c.team_id = ${s.teamId}::uuid and c.plus_id = e.plus_id) w`;
}

/** featuresSql's row as Features (`lexemes` and `pairs`: the term choice's counts). */
export function featuresOf(r: FeatureRow, lexemes: number, pairs: number): Features {
  const tf = new Array<number>(lexemes);
  for (let i = 0; i < lexemes; i++) tf[i] = Number(r[`t${i}`]);
  const p = new Array<number>(pairs);
  for (let k = 0; k < pairs; k++) p[k] = Number(r[`p${k}`]);
  return {
    chunkId: Number(r.id),
    fileId: r.file_id,
    plusId: r.plus_id,
    tokenSize: Number(r.token_size),
    fileTokens: Number(r.file_tokens),
    tf,
    headings: Number(r.h),
    pairs: p,
  };
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
