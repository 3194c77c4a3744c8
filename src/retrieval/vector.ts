import { sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../db/client.js';
import type { ScoredChunk } from './repo.js';
import type { ChunkScope } from './search-sql.js';
import { execute } from '../db/driver.js';

/**
 * Vector search over plus_chunk_vectors: the chunks in scope, embedded with `modelId`, nearest to
 * the question's vector by cosine similarity (every stored vector and the question's are of unit
 * length, so cosine = dot product). Exact (no approximate index): the scope is one team's
 * entries, and the model's vectors may have any size.
 *
 * - `vectorOps` (pgvector present: bundled with PGlite, or a PostgreSQL server with the
 *   extension): the real[] column cast to `vector` and pgvector's `<=>` cosine distance, computed
 *   in C per row.
 * - otherwise: the dot product in plain SQL over `unnest(a, b)` — several times slower per row,
 *   but the same answer on any PostgreSQL (BENCHMARKS.md, "Hybrid retrieval").
 *
 * Vectors of another size than the question's (a model whose dimensions were changed) are left
 * out rather than compared.
 */
export interface VectorQuery {
  modelId: string;
  /** unit length */
  vector: number[];
}

const uuidList = (ids: string[]) =>
  sql.join(
    ids.map((id) => sql`${id}::uuid`),
    sql`, `,
  );

function scopeSql(s: ChunkScope): SQL {
  const parts = [];
  if (s.plusIds.length > 0) parts.push(sql`v.plus_id in (${uuidList(s.plusIds)})`);
  if (s.fileIds.length > 0) parts.push(sql`v.file_id in (${uuidList(s.fileIds)})`);
  return sql`(v.team_id = ${s.teamId}::uuid and (${sql.join(parts, sql` or `)}))`;
}

/** A float as SQL array/vector text accepts it (no exponent surprises, no NaN). */
const num = (x: number) => (Number.isFinite(x) ? String(Math.fround(x)) : '0');

export function vectorSearchSql(scope: ChunkScope, q: VectorQuery, limit: number, vectorOps: boolean): SQL {
  const dims = q.vector.length;
  const where = sql`v.model_id = ${q.modelId}::uuid and ${scopeSql(scope)} and array_length(v.embedding, 1) = ${dims}`;
  const top = vectorOps
    ? sql`
      select v.chunk_id, 1 - (v.embedding::vector <=> ${`[${q.vector.map(num).join(',')}]`}::vector) as score
      from plus_chunk_vectors v
      where ${where}
      order by v.embedding::vector <=> ${`[${q.vector.map(num).join(',')}]`}::vector, v.chunk_id
      limit ${limit}`
    : sql`
      select v.chunk_id, (select sum(a * b) from unnest(v.embedding, ${`{${q.vector.map(num).join(',')}}`}::real[]) as t(a, b)) as score
      from plus_chunk_vectors v
      where ${where}
      order by score desc, v.chunk_id
      limit ${limit}`;
  return sql`
    with top as (${top})
    select c.id, c.file_id, c.plus_id, f.filename, c.heading, c.file_data_processed as text, c.token_size, top.score
    from top join plus_chunks c on c.id = top.chunk_id join plus_files f on f.id = c.file_id
    order by top.score desc, c.id`;
}

type Row = {
  id: number | string;
  file_id: string;
  plus_id: string;
  filename: string;
  heading: string | null;
  text: string;
  token_size: number;
  score: number | string;
};

/** The `limit` chunks in scope nearest to the question's vector, nearest first. */
export async function vectorSearch(db: Executor, scope: ChunkScope, q: VectorQuery, limit: number, vectorOps: boolean): Promise<ScoredChunk[]> {
  if (scope.plusIds.length === 0 && scope.fileIds.length === 0) return [];
  const res = await execute<Row>(db, vectorSearchSql(scope, q, limit, vectorOps));
  return res.rows.map((r, i) => {
    const score = Number(r.score);
    return {
      chunkId: Number(r.id),
      fileId: r.file_id,
      filename: r.filename,
      plusId: r.plus_id,
      heading: r.heading,
      text: r.text,
      tokenSize: r.token_size,
      score,
      rank: i + 1,
      ranking: { lexical: null, vector: { score, rank: i + 1 } },
    };
  });
}

/**
 * The cosine similarity to the question of each of `chunkIds` embedded by the question's model
 * (those of full text's first candidates the vector list left out: hybridRank weighs the two
 * lists by how far they agree on them).
 */
export async function cosinesOf(db: Executor, q: VectorQuery, chunkIds: readonly number[], vectorOps: boolean): Promise<Map<number, number>> {
  const out = new Map<number, number>();
  if (chunkIds.length === 0) return out;
  const score = vectorOps
    ? sql`1 - (v.embedding::vector <=> ${`[${q.vector.map(num).join(',')}]`}::vector)`
    : sql`(select sum(a * b) from unnest(v.embedding, ${`{${q.vector.map(num).join(',')}}`}::real[]) as t(a, b))`;
  const res = await execute<{ chunk_id: number | string; score: number | string }>(
    db,
    sql`
    select v.chunk_id, ${score} as score
    from plus_chunk_vectors v
    where v.chunk_id = any(${`{${chunkIds.join(',')}}`}::bigint[]) and v.model_id = ${q.modelId}::uuid and array_length(v.embedding, 1) = ${q.vector.length}`,
  );
  for (const r of res.rows) out.set(Number(r.chunk_id), Number(r.score));
  return out;
}

/** A follow-up's previous question weighs this much in the vector it searches with (as its carried words do in full text). */
export const CARRY_VECTOR_WEIGHT = 0.5;

/**
 * The vector a question searches with: its own, or for a follow-up its own plus
 * CARRY_VECTOR_WEIGHT × the previous question's (both unit length), back to unit length — the
 * vector counterpart of full text's carried words.
 */
export function followUpVector(own: number[], carried: number[] | null): number[] {
  if (!carried || carried.length !== own.length) return own;
  const sum = own.map((x, i) => x + CARRY_VECTOR_WEIGHT * carried[i]!);
  const len = Math.hypot(...sum);
  return len > 0 ? sum.map((x) => x / len) : own;
}
