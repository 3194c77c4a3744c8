import { sql } from 'drizzle-orm';
import type { Executor } from '../db/client.js';

export interface ScoredChunk {
  id: number;
  fileId: string;
  plusId: string;
  idx: number;
  text: string;
  tokenSize: number;
  score: number;
}

export interface ChunkScope {
  plusIds: string[];
  fileIds: string[];
}

function scopeSql(s: ChunkScope) {
  const parts = [];
  if (s.plusIds.length > 0) parts.push(sql`c.plus_id in (${sql.join(s.plusIds.map((id) => sql`${id}::uuid`), sql`, `)})`);
  if (s.fileIds.length > 0) parts.push(sql`c.file_id in (${sql.join(s.fileIds.map((id) => sql`${id}::uuid`), sql`, `)})`);
  return sql`(${sql.join(parts, sql` or `)})`;
}

type Row = { id: number | string; file_id: string; plus_id: string; idx: number; text: string; token_size: number; score: number | string };
const toChunk = (r: Row): ScoredChunk => ({
  id: Number(r.id),
  fileId: r.file_id,
  plusId: r.plus_id,
  idx: r.idx,
  text: r.text,
  tokenSize: r.token_size,
  score: Number(r.score),
});

/** Full-text search over chunk text (GIN index on the stored tsvector). */
export class RetrievalRepo {
  /** The best-matching chunks in scope, best first. `tsquery` is a to_tsquery source (see query.ts). */
  async search(db: Executor, scope: ChunkScope, tsquery: string, limit: number): Promise<ScoredChunk[]> {
    if (scope.plusIds.length === 0 && scope.fileIds.length === 0) return [];
    const res = (await db.execute(sql`
      select c.id, c.file_id, c.plus_id, c.idx, c.file_data_processed as text, c.token_size,
             ts_rank(c.search, q, 1) as score
      from plus_chunks c, to_tsquery('english', ${tsquery}) q
      where c.search @@ q and ${scopeSql(scope)}
      order by score desc, c.id
      limit ${limit}`)) as unknown as { rows: Row[] };
    return res.rows.map(toChunk);
  }

  /** When nothing matches (a question of stop words, "summarise this"), the documents' opening chunks. */
  async leading(db: Executor, scope: ChunkScope, limit: number): Promise<ScoredChunk[]> {
    if (scope.plusIds.length === 0 && scope.fileIds.length === 0) return [];
    const res = (await db.execute(sql`
      select c.id, c.file_id, c.plus_id, c.idx, c.file_data_processed as text, c.token_size, 0 as score
      from plus_chunks c
      where ${scopeSql(scope)}
      order by c.idx, c.id
      limit ${limit}`)) as unknown as { rows: Row[] };
    return res.rows.map(toChunk);
  }
}
