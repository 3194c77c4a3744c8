import { TtlCache } from '../../cache.js';
import type { EmbeddingConfig } from '../../config.js';
import type { Database, Tx } from '../../db/client.js';
import { AppError, badRequest } from '../../errors.js';
import { classifyProviderError, embed, unitVector } from '../../providers/index.js';
import type { ProviderTimeouts } from '../../providers/types.js';
import { followUpVector, type VectorQuery } from '../../retrieval/vector.js';
import type { ModelsService } from '../models/service.js';
import { requireTeamAdmin, type Principal } from '../../policy/index.js';
import { RerankService } from './rerank.js';
import { EmbeddingsRepo, type ClaimedFile, type EmbeddingStatus } from './repo.js';
import type { EmbeddingSettingsT, FileEmbeddingT } from './schema.js';

/** Files claimed per pass of the worker (each is embedded in batches of `batchSize` chunks). */
const FILES_PER_PASS = 4;
const TEAM_MODEL_TTL_MS = 2_000;
/** Question vectors are reused for a minute (a thread's retries, the same question in several places). */
const QUERY_CACHE_TTL_MS = 60_000;

/**
 * Embeddings of Plus files with the team's chosen embedding model, and the question vectors the
 * hybrid search compares them with. The background worker (`start`) embeds files after upload,
 * retries failures with exponential backoff and claims work so several nodes can share it.
 */
export class EmbeddingsService {
  private readonly repo = new EmbeddingsRepo();
  private readonly teamModels = new TtlCache<string, { modelId: string } | null>(TEAM_MODEL_TTL_MS);
  private readonly queries = new TtlCache<string, number[]>(QUERY_CACHE_TTL_MS, 1_000);
  /** the team's rerank model and reranking with it (rerank.ts) */
  readonly reranker: RerankService;
  private pass: Promise<number> | null = null;
  private kickTimer: NodeJS.Immediate | null = null;
  private stopped = true;

  constructor(
    private readonly database: Database,
    private readonly models: ModelsService,
    private readonly timeouts: ProviderTimeouts,
    private readonly config: EmbeddingConfig,
    private readonly onError: (err: unknown, what: string) => void = () => {},
  ) {
    this.reranker = new RerankService(database, models, timeouts, onError);
  }

  private get db() {
    return this.database.db;
  }

  // ---- the team setting ------------------------------------------------------------------

  async settings(caller: Principal): Promise<EmbeddingSettingsT> {
    const current = await this.repo.teamModel(this.db, caller.teamId);
    if (!current) return { embeddingModelId: null, modelName: null, dimensions: null, files: { pending: 0, embedding: 0, ready: 0, failed: 0 }, updated: null };
    const model = await this.models.findUsable(caller.teamId, current.modelId);
    const { counts, dimensions } = await this.repo.progress(this.db, caller.teamId, current.modelId);
    return {
      embeddingModelId: current.modelId,
      modelName: model?.name ?? null,
      dimensions: dimensions ?? model?.embeddingDimensions ?? null,
      files: counts,
      updated: current.updated.toISOString(),
    };
  }

  /**
   * Choose (or with null, clear) the team's embedding model. Choosing one — even the current one
   * again — queues every file of the team for (re-)embedding with it.
   */
  async choose(caller: Principal, modelId: string | null): Promise<EmbeddingSettingsT> {
    requireTeamAdmin(caller);
    if (modelId === null) {
      await this.db.transaction((tx) => this.repo.clearTeamModel(tx, caller.teamId));
    } else {
      const model = await this.models.findUsable(caller.teamId, modelId);
      if (!model) {
        throw badRequest('model_not_available', 'That model is not available to this team', [
          { path: 'body/embeddingModelId', message: 'is not a model this team uses' },
        ]);
      }
      this.models.assertKind(model, 'embedding', 'body/embeddingModelId');
      await this.db.transaction((tx) => this.repo.setTeamModel(tx, caller.teamId, model));
    }
    this.teamModels.delete(caller.teamId);
    this.kick();
    return this.settings(caller);
  }

  private async teamModel(teamId: string): Promise<{ modelId: string } | null> {
    return this.teamModels.load(teamId, async () => {
      const row = await this.repo.teamModel(this.db, teamId);
      return row ? { modelId: row.modelId } : null;
    });
  }

  // ---- files -----------------------------------------------------------------------------

  /** In the transaction that stores new files: queue them if their team has an embedding model. */
  enqueueFiles(tx: Tx, fileIds: string[]): Promise<void> {
    return this.repo.enqueueFiles(tx, fileIds);
  }

  /** Each file's embedding status (null: the team has no embedding model, full-text only). */
  async statuses(teamId: string, fileIds: string[]): Promise<Map<string, FileEmbeddingT | null>> {
    const out = new Map<string, FileEmbeddingT | null>(fileIds.map((id) => [id, null]));
    if (fileIds.length === 0 || !(await this.teamModel(teamId))) return out;
    for (const r of await this.repo.statusOf(this.db, fileIds)) {
      out.set(r.fileId, { status: r.status, error: r.error, attempts: r.attempts, updated: r.updated.toISOString() });
    }
    return out;
  }

  /** Called after files were committed: embed them soon rather than at the next tick. */
  kick(): void {
    if (this.stopped || this.kickTimer) return;
    this.kickTimer = setImmediate(() => {
      this.kickTimer = null;
      void this.runOnce().catch((err: unknown) => this.onError(err, 'embedding pass failed'));
    });
  }

  // ---- questions -------------------------------------------------------------------------

  /**
   * The question's vector with the team's embedding model, or null when the team has none (then
   * retrieval is full-text only, exactly as without embeddings) or the model cannot answer now
   * (the failure is reported to onError; the turn goes on full-text only). A follow-up's previous
   * question (`carry`) is embedded in the same request and weighed in (retrieval/vector.ts,
   * followUpVector).
   */
  async queryVector(teamId: string, text: string, carry: string | null = null): Promise<VectorQuery | null> {
    const chosen = await this.teamModel(teamId);
    if (!chosen) return null;
    try {
      const model = await this.models.findUsable(teamId, chosen.modelId);
      if (!model || model.kind !== 'embedding') return null;
      const key = `${model.id}:${model.updated.getTime()}:${carry === null ? '' : `${carry.length}:${carry}`}:${text}`;
      let vector = this.queries.get(key);
      if (!vector) {
        const { target } = await this.models.resolve(model);
        const texts = carry ? [text, carry] : [text];
        const [raw, rawCarried] = await embed({ target, texts, dimensions: model.embeddingDimensions, timeouts: this.timeouts });
        const unit = raw ? unitVector(raw) : null;
        if (!unit) return null;
        vector = followUpVector(unit, rawCarried ? unitVector(rawCarried) : null);
        this.queries.set(key, vector);
      }
      return { modelId: model.id, vector };
    } catch (err) {
      this.onError(err, 'question embedding failed; full-text only');
      return null;
    }
  }

  /** Whether the database offers pgvector's operators (db/client.ts). */
  vectorOps(): Promise<boolean> {
    return this.database.vectorOps();
  }

  // ---- the worker ------------------------------------------------------------------------

  /**
   * Run on this node every `workerIntervalMs` (0: never) until the returned stop function is
   * called; stop waits for a pass in progress. Files stored before embeddings existed are queued
   * once at start.
   */
  start(): () => Promise<void> {
    if (this.config.workerIntervalMs <= 0) return async () => {};
    this.stopped = false;
    const tick = () => void (this.stopped ? Promise.resolve(0) : this.runOnce()).catch((err: unknown) => this.onError(err, 'embedding pass failed'));
    const queued = this.repo
      .enqueueAll(this.db)
      .then(tick)
      .catch((err: unknown) => this.onError(err, 'embedding queue check failed'));
    const timer = setInterval(tick, this.config.workerIntervalMs);
    timer.unref();
    return async () => {
      this.stopped = true;
      clearInterval(timer);
      if (this.kickTimer) clearImmediate(this.kickTimer);
      this.kickTimer = null;
      await queued;
      await this.pass?.catch(() => {});
    };
  }

  /**
   * One pass: claim due files, embed each (batches of `batchSize` chunks per provider request),
   * store its vectors and mark it ready, or failed with the reason and a retry time. Returns the
   * number of files processed. Passes on one node never overlap (a call during one joins it).
   */
  runOnce(): Promise<number> {
    this.pass ??= this.passNow().finally(() => {
      this.pass = null;
    });
    return this.pass;
  }

  private async passNow(): Promise<number> {
    let done = 0;
    for (;;) {
      // background work: its statements give way to requests' (Database.bulk)
      const claimed = await this.repo.claim(this.database.bulk, FILES_PER_PASS, this.config.claimMs);
      if (claimed.length === 0) return done;
      for (const c of claimed) await this.embedFile(c);
      done += claimed.length;
      if (claimed.length < FILES_PER_PASS) return done;
    }
  }

  private async embedFile(c: ClaimedFile): Promise<void> {
    try {
      const model = await this.models.findUsable(c.teamId, c.modelId);
      if (!model) throw new AppError('bad_request', 'model_not_available', 'The embedding model is no longer available to this team');
      this.models.assertKind(model, 'embedding', 'embeddingModelId');
      const { target } = await this.models.resolve(model);
      const chunks = await this.repo.chunksOf(this.database.bulk, c.fileId);
      const vectors: Array<{ chunkId: number; plusId: string; embedding: number[] }> = [];
      let dims = -1;
      for (let i = 0; i < chunks.length; i += this.config.batchSize) {
        const batch = chunks.slice(i, i + this.config.batchSize);
        const raw = await embed({ target, texts: batch.map((b) => b.text), dimensions: model.embeddingDimensions, timeouts: this.timeouts });
        batch.forEach((b, j) => {
          const v = raw[j]!;
          if (dims !== -1 && v.length !== dims) throw new AppError('upstream', 'provider_bad_response', 'The model answered vectors of different sizes');
          dims = v.length;
          // a zero vector has no direction: stored as zeros, it is never near anything
          vectors.push({ chunkId: b.id, plusId: b.plusId, embedding: unitVector(v) ?? v });
        });
      }
      await this.db.transaction((tx) => this.repo.storeVectors(tx, c, vectors));
    } catch (err) {
      await this.repo.markFailed(this.db, c, describe(err), new Date(Date.now() + this.backoffMs(c.attempts)));
    }
  }

  private backoffMs(attempts: number): number {
    const { retryBaseMs, retryMaxMs } = this.config;
    return Math.min(retryMaxMs, retryBaseMs * 2 ** Math.min(30, Math.max(0, attempts - 1)));
  }
}

/** The reason a file failed, for its status: a stable code and a generic message, never the provider's own text. */
function describe(err: unknown): string {
  if (err instanceof AppError) return `${err.code}: ${err.message}`;
  const pe = classifyProviderError(err);
  return `${pe.code}: ${pe.message}`;
}

export type { EmbeddingStatus };
