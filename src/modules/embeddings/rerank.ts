/**
 * The team's rerank model (`PUT /api/v1/embeddings/rerank`) and reranking with it: retrieval's
 * best RERANK_CANDIDATES candidates (full text, or hybrid with an embedding model) are sent with
 * the question to the model (providers/rerank.ts) and put in its order; the rest follow in
 * retrieval's. Without a rerank model, or when the model fails (reported to onError), retrieval's
 * order is kept: a rerank model can only change the order of what retrieval found.
 */
import { TtlCache } from '../../cache.js';
import type { Database } from '../../db/client.js';
import { badRequest } from '../../errors.js';
import { rerank } from '../../providers/index.js';
import type { ProviderTimeouts } from '../../providers/types.js';
import type { ScoredChunk } from '../../retrieval/repo.js';
import type { ModelsService } from '../models/service.js';
import type { ModelRow } from '../models/repo.js';
import { requireTeamAdmin, type Principal } from '../../policy/index.js';
import { EmbeddingsRepo } from './repo.js';
import type { RerankSettingsT } from './schema.js';

/** How many of retrieval's best candidates are reranked (a cross-encoder reads each in full). */
export const RERANK_CANDIDATES = 20;
const TEAM_MODEL_TTL_MS = 2_000;

export class RerankService {
  private readonly repo = new EmbeddingsRepo();
  private readonly teamModels = new TtlCache<string, { modelId: string } | null>(TEAM_MODEL_TTL_MS);

  constructor(
    private readonly database: Database,
    private readonly models: ModelsService,
    private readonly timeouts: ProviderTimeouts,
    private readonly onError: (err: unknown, what: string) => void = () => {},
  ) {}

  private get db() {
    return this.database.db;
  }

  async settings(caller: Principal): Promise<RerankSettingsT> {
    const current = await this.repo.teamRerankModel(this.db, caller.teamId);
    if (!current) return { rerankModelId: null, modelName: null, candidates: RERANK_CANDIDATES, updated: null };
    const model = await this.models.findUsable(caller.teamId, current.modelId);
    return { rerankModelId: current.modelId, modelName: model?.name ?? null, candidates: RERANK_CANDIDATES, updated: current.updated.toISOString() };
  }

  /** Choose (or with null, clear) the team's rerank model: owners and admins; a model of kind rerank the team uses. */
  async choose(caller: Principal, modelId: string | null): Promise<RerankSettingsT> {
    requireTeamAdmin(caller);
    let model: ModelRow | null = null;
    if (modelId !== null) {
      model = (await this.models.findUsable(caller.teamId, modelId)) ?? null;
      if (!model) {
        throw badRequest('model_not_available', 'That model is not available to this team', [
          { path: 'body/rerankModelId', message: 'is not a model this team uses' },
        ]);
      }
      this.models.assertKind(model, 'rerank', 'body/rerankModelId');
    }
    await this.repo.setTeamRerankModel(this.db, caller.teamId, model);
    this.teamModels.delete(caller.teamId);
    return this.settings(caller);
  }

  /** Whether the team has a rerank model (cached for a moment: read on every retrieval). */
  async enabled(teamId: string): Promise<boolean> {
    return (await this.teamModel(teamId)) !== null;
  }

  private async teamModel(teamId: string): Promise<{ modelId: string } | null> {
    return this.teamModels.load(teamId, async () => {
      const row = await this.repo.teamRerankModel(this.db, teamId);
      return row ? { modelId: row.modelId } : null;
    });
  }

  /**
   * `candidates` (best first, texts read) in the team's rerank model's order, each with
   * `ranking.rerank` and its relevance as `score`; null when the team has none or it failed.
   */
  async rerank(teamId: string, question: string, candidates: readonly ScoredChunk[]): Promise<ScoredChunk[] | null> {
    const chosen = await this.teamModel(teamId);
    if (!chosen || candidates.length === 0) return null;
    try {
      const model = await this.models.findUsable(teamId, chosen.modelId);
      if (!model || model.kind !== 'rerank') return null;
      const { target } = await this.models.resolve(model);
      const documents = candidates.map((c) => (c.heading ? `${c.heading}\n\n${c.text ?? ''}` : (c.text ?? '')));
      const results = await rerank({ target, query: question, documents, topN: candidates.length, timeouts: this.timeouts });
      const placed = new Set(results.map((r) => r.index));
      // a server that answered fewer than asked: the others keep retrieval's order after them
      const order = [...results, ...candidates.map((_, index) => ({ index, relevanceScore: null })).filter((r) => !placed.has(r.index))];
      return order.map((r, i) => {
        const c = candidates[r.index]!;
        const rerankIn = r.relevanceScore === null ? null : { score: r.relevanceScore, rank: i + 1 };
        return { ...c, score: r.relevanceScore ?? c.score, rank: i + 1, ranking: { ...c.ranking, rerank: rerankIn } };
      });
    } catch (err) {
      this.onError(err, 'reranking failed; retrieval order kept');
      return null;
    }
  }
}
