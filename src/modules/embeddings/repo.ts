import { and, eq, inArray, sql, type SQL } from 'drizzle-orm';
import type { Executor, Tx } from '../../db/client.js';
import type { ModelKey } from '../models/repo.js';
import { plusChunkVectors, plusFileEmbeddings, teamEmbeddingModels, teamRerankModels } from '../../db/schema/embeddings.js';
import { execute } from '../../db/driver.js';

export type FileEmbeddingRow = typeof plusFileEmbeddings.$inferSelect;
export type EmbeddingStatus = FileEmbeddingRow['status'];

export interface ClaimedFile {
  fileId: string;
  teamId: string;
  modelId: string;
  attempts: number;
}

const VECTOR_INSERT_BATCH = 200;

/**
 * SQL of the embedding tables: team_embedding_models, team_rerank_models, plus_file_embeddings, plus_chunk_vectors.
 * It also reads plus_files / plus_entries / plus_chunks (the files and chunks to embed), which
 * modules/plus owns and writes (docs/ARCHITECTURE.md, "Embeddings").
 */
export class EmbeddingsRepo {
  async teamModel(db: Executor, teamId: string): Promise<{ modelId: string; updated: Date } | undefined> {
    const [row] = await db
      .select({ modelId: teamEmbeddingModels.modelId, updated: teamEmbeddingModels.updated })
      .from(teamEmbeddingModels)
      .where(eq(teamEmbeddingModels.teamId, teamId));
    return row;
  }

  /**
   * Choose the team's embedding model: every file of the team goes back to `pending` for it (so
   * choosing the same model again re-embeds everything), and vectors of other models go.
   */
  async setTeamModel(tx: Tx, teamId: string, model: ModelKey): Promise<void> {
    const modelId = model.id;
    await tx
      .insert(teamEmbeddingModels)
      .values({ teamId, modelScope: model.scope, modelId })
      .onConflictDoUpdate({ target: teamEmbeddingModels.teamId, set: { modelScope: model.scope, modelId, updated: new Date() } });
    await execute(tx, sql`delete from plus_chunk_vectors v where v.team_id = ${teamId}::uuid and v.model_id <> ${modelId}::uuid`);
    await execute(
      tx,
      sql`
      update plus_file_embeddings
      set model_id = ${modelId}::uuid, status = 'pending', attempts = 0, error = null, next_attempt = now(), claimed_until = null, updated = now()
      where team_id = ${teamId}::uuid`,
    );
    await this.enqueueMissing(tx, sql`e.team_id = ${teamId}::uuid`);
  }

  /** No embedding model: full-text only; the team's vectors and statuses go. */
  /** The team's rerank model (none: no reranking). */
  async teamRerankModel(db: Executor, teamId: string): Promise<{ modelId: string; updated: Date } | undefined> {
    const [row] = await db
      .select({ modelId: teamRerankModels.modelId, updated: teamRerankModels.updated })
      .from(teamRerankModels)
      .where(eq(teamRerankModels.teamId, teamId));
    return row;
  }

  /** Choose (a model id) or clear (null) the team's rerank model. */
  async setTeamRerankModel(db: Executor, teamId: string, model: ModelKey | null): Promise<void> {
    if (model === null) await db.delete(teamRerankModels).where(eq(teamRerankModels.teamId, teamId));
    else
      await db
        .insert(teamRerankModels)
        .values({ teamId, modelScope: model.scope, modelId: model.id })
        .onConflictDoUpdate({ target: teamRerankModels.teamId, set: { modelScope: model.scope, modelId: model.id, updated: new Date() } });
  }

  async clearTeamModel(tx: Tx, teamId: string): Promise<void> {
    await tx.delete(teamEmbeddingModels).where(eq(teamEmbeddingModels.teamId, teamId));
    await tx.delete(plusFileEmbeddings).where(eq(plusFileEmbeddings.teamId, teamId));
    await tx.delete(plusChunkVectors).where(eq(plusChunkVectors.teamId, teamId));
  }

  /** `pending` rows for files (matching `where` over plus_entries e / plus_files f) of teams with a model that have none. */
  private async enqueueMissing(db: Executor, where: SQL): Promise<void> {
    await execute(
      db,
      sql`
      insert into plus_file_embeddings (file_id, team_id, model_id, status)
      select f.id, e.team_id, t.model_id, 'pending'
      from plus_files f
      join plus_entries e on e.team_id = f.team_id and e.id = f.plus_id
      join team_embedding_models t on t.team_id = e.team_id
      where ${where} and not f.storing and not exists (select 1 from plus_file_embeddings s where s.file_id = f.id)
      on conflict (file_id) do nothing`,
    );
  }

  /** New files, in the transaction that stores them: queued when their team has an embedding model (else nothing). */
  async enqueueFiles(tx: Tx, fileIds: string[]): Promise<void> {
    if (fileIds.length === 0) return;
    await this.enqueueMissing(
      tx,
      sql`f.id in (${sql.join(
        fileIds.map((id) => sql`${id}::uuid`),
        sql`, `,
      )})`,
    );
  }

  /** Files stored before embeddings existed, or by a node that crashed mid-way: queued. Idempotent. */
  async enqueueAll(db: Executor): Promise<void> {
    await this.enqueueMissing(db, sql`true`);
  }

  /**
   * Claim up to `limit` due files for this node until `claimMs` from now: pending or failed ones
   * whose retry time has come, and ones whose previous claim expired (a node that died). Rows
   * another node is claiming are skipped (FOR UPDATE SKIP LOCKED), so nodes never share a file.
   */
  async claim(db: Executor, limit: number, claimMs: number): Promise<ClaimedFile[]> {
    const res = await execute<{ file_id: string; team_id: string; model_id: string; attempts: number }>(
      db,
      sql`
      update plus_file_embeddings s
      set status = 'embedding', claimed_until = now() + ${claimMs} * interval '1 millisecond', attempts = s.attempts + 1, updated = now()
      where s.file_id in (
        select d.file_id from plus_file_embeddings d
        where (d.status in ('pending', 'failed') and d.next_attempt <= now()) or (d.status = 'embedding' and d.claimed_until < now())
        order by d.next_attempt, d.file_id
        limit ${limit}
        for update skip locked)
      returning s.file_id, s.team_id, s.model_id, s.attempts`,
    );
    return res.rows.map((r) => ({ fileId: r.file_id, teamId: r.team_id, modelId: r.model_id, attempts: Number(r.attempts) }));
  }

  async chunksOf(db: Executor, fileId: string): Promise<Array<{ id: number; plusId: string; text: string }>> {
    const res = await execute<{ id: number | string; plus_id: string; text: string }>(
      db,
      sql`
      select id, plus_id, file_data_processed as text from plus_chunks where file_id = ${fileId}::uuid order by idx, id`,
    );
    return res.rows.map((r) => ({ id: Number(r.id), plusId: r.plus_id, text: r.text }));
  }

  /**
   * Store a file's vectors and mark it ready, if this node's claim (file and model) still holds:
   * a model changed meanwhile reset the row to pending for the new model, and these vectors are
   * then dropped. Returns whether they were stored.
   */
  async storeVectors(tx: Tx, c: ClaimedFile, vectors: Array<{ chunkId: number; plusId: string; embedding: number[] }>): Promise<boolean> {
    const done = await tx
      .update(plusFileEmbeddings)
      .set({ status: 'ready', error: null, claimedUntil: null, updated: new Date() })
      .where(and(eq(plusFileEmbeddings.fileId, c.fileId), eq(plusFileEmbeddings.modelId, c.modelId), eq(plusFileEmbeddings.status, 'embedding')))
      .returning({ fileId: plusFileEmbeddings.fileId });
    if (done.length === 0) return false;
    await tx.delete(plusChunkVectors).where(eq(plusChunkVectors.fileId, c.fileId));
    for (let i = 0; i < vectors.length; i += VECTOR_INSERT_BATCH) {
      await tx
        .insert(plusChunkVectors)
        .values(
          vectors
            .slice(i, i + VECTOR_INSERT_BATCH)
            .map((v) => ({ chunkId: v.chunkId, teamId: c.teamId, fileId: c.fileId, plusId: v.plusId, modelId: c.modelId, embedding: v.embedding })),
        );
    }
    return true;
  }

  /** A failed attempt: retried at `retryAt` (the claim must still hold, as for storeVectors). */
  async markFailed(db: Executor, c: ClaimedFile, error: string, retryAt: Date): Promise<void> {
    await db
      .update(plusFileEmbeddings)
      .set({ status: 'failed', error, nextAttempt: retryAt, claimedUntil: null, updated: new Date() })
      .where(and(eq(plusFileEmbeddings.fileId, c.fileId), eq(plusFileEmbeddings.modelId, c.modelId), eq(plusFileEmbeddings.status, 'embedding')));
  }

  async statusOf(db: Executor, fileIds: string[]): Promise<FileEmbeddingRow[]> {
    if (fileIds.length === 0) return [];
    return db.select().from(plusFileEmbeddings).where(inArray(plusFileEmbeddings.fileId, fileIds));
  }

  /** Files of the team by status, and the size of the stored vectors of its model (null before the first). */
  async progress(db: Executor, teamId: string, modelId: string): Promise<{ counts: Record<EmbeddingStatus, number>; dimensions: number | null }> {
    const rows = await db
      .select({ status: plusFileEmbeddings.status, n: sql<number>`count(*)::int` })
      .from(plusFileEmbeddings)
      .where(eq(plusFileEmbeddings.teamId, teamId))
      .groupBy(plusFileEmbeddings.status);
    const counts: Record<EmbeddingStatus, number> = { pending: 0, embedding: 0, ready: 0, failed: 0 };
    for (const r of rows) counts[r.status] = Number(r.n);
    const dims = await execute<{ dims: number }>(
      db,
      sql`
      select array_length(v.embedding, 1) as dims from plus_chunk_vectors v
      where v.team_id = ${teamId}::uuid and v.model_id = ${modelId}::uuid limit 1`,
    );
    return { counts, dimensions: dims.rows[0]?.dims ?? null };
  }
}
