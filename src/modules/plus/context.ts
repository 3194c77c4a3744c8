/**
 * The context Plus gives a question: the lexical ranking (an entry's in-memory index when current,
 * else SQL), fused with the vector ranking when the team embeds, packed under a token budget with
 * the texts of the chunks used read — for context-for-prompt and for a chat turn.
 */
import type { Static } from 'typebox';
import type { Db } from '../../db/client.js';
import type { StoredSource } from '../../db/schema/chat.js';
import { notFound } from '../../errors.js';
import { hybridRank, lexicalTop } from '../../retrieval/fusion.js';
import type { EntryIndex } from '../../retrieval/lexical-index/entry-index.js';
import type { LexicalIndexes } from '../../retrieval/lexical-index/indexes.js';
import { planPack, renderPack, type PackOptions, type PackPlan } from '../../retrieval/pack.js';
import { relevanceCut } from '../../retrieval/relevance.js';
import { RetrievalRepo, type RankIn, type Ranking, type Retrieved, type ScoredChunk } from '../../retrieval/repo.js';
import type { ChunkScope, Question } from '../../retrieval/search-sql.js';
import { cosinesOf, vectorSearch } from '../../retrieval/vector.js';
import { RERANK_CANDIDATES } from '../embeddings/rerank.js';
import type { EmbeddingsService } from '../embeddings/service.js';
import type { WorkspaceRow } from '../workspaces/repo.js';
import type { PlusRepo, PlusRow, Viewer } from './repo.js';
import type { ContextForPromptResponse } from './schema.js';

/** What a chat turn asks for: the entries it names (and the workspace's own), its thread, the question and the budget. */
export interface TurnQuery {
  plusIds: string[];
  threadId: string | null;
  query: string;
  carry?: string | null;
  budgetTokens: number;
  workspacePlusIds?: string[];
}

const DEFAULT_CONTEXT_TOKENS = 2000;
const CANDIDATES = 50;
const EXCERPT_CHARS = 240;

export class PlusContext {
  private readonly retrieval = new RetrievalRepo();

  constructor(
    private readonly db: Db,
    private readonly repo: PlusRepo,
    private readonly embeddings: EmbeddingsService,
    /** in-memory lexical indexes of entries (null: every search ranks in SQL) */
    private readonly lexical: LexicalIndexes | null,
    /** for a large search's feature reads (Database.bulk) */
    private readonly bulk: Db = db,
  ) {}

  /**
   * Hybrid retrieval (docs/API.md, "Hybrid retrieval"): with the team's embedding model and
   * embedded chunks in scope, the full-text candidates and the nearest chunks by vector combined
   * by normalised scores, the vector list weighed by how far the two agree (retrieval/fusion.ts).
   * A follow-up's vector carries its previous question, as its full-text terms do. Without an
   * embedding model — or before any chunk in scope is embedded, or when the model cannot embed
   * the question now — the full-text candidates unchanged. Full-text's fallback to the opening
   * chunks does not count as a ranking.
   */
  private async withVectors(teamId: string, scope: ChunkScope, question: Question, lexical: Retrieved): Promise<ScoredChunk[]> {
    const q = await this.embeddings.queryVector(teamId, question.text, question.carry ?? null);
    if (!q) return lexical.chunks;
    const vectorOps = await this.embeddings.vectorOps();
    const near = await vectorSearch(this.db, scope, q, CANDIDATES, vectorOps);
    if (near.length === 0) return lexical.chunks;
    const seen = new Set(near.map((c) => c.chunkId));
    const cosines = await cosinesOf(
      this.db,
      q,
      lexicalTop(lexical).filter((id) => !seen.has(id)),
      vectorOps,
    );
    return hybridRank(lexical, near, cosines, CANDIDATES);
  }

  /**
   * With the team's rerank model (modules/embeddings/rerank.ts): the best RERANK_CANDIDATES of
   * `ranked` (texts read first) in its order, the rest after them; a follow-up is asked with its
   * previous question before it. Otherwise, or when the model fails, `ranked` unchanged.
   */
  private async reranked(teamId: string, question: Question, ranked: ScoredChunk[]): Promise<ScoredChunk[]> {
    const reranker = this.embeddings.reranker;
    if (ranked.length === 0 || !(await reranker.enabled(teamId))) return ranked;
    const top = ranked.slice(0, RERANK_CANDIDATES);
    const gone = await this.retrieval.hydrate(this.db, top);
    const order = await reranker.rerank(
      teamId,
      question.carry ? `${question.carry}\n${question.text}` : question.text,
      top.filter((c) => !gone.has(c.chunkId)),
    );
    if (!order) return ranked;
    return [...order, ...ranked.slice(RERANK_CANDIDATES).map((c, i) => ({ ...c, rank: order.length + i + 1 }))];
  }

  /**
   * The lexical ranking of one entry: from its in-memory index when one is current (the entry
   * and the question's lexemes in one statement, then no other), else in SQL (the entry and the
   * question's term statistics in one statement, then the search); a missing or stale index is
   * (re)built in the background.
   */
  private async searchEntry(v: Viewer, plusId: string, question: string): Promise<{ entry: Pick<PlusRow, 'teamId' | 'context'>; retrieved: Retrieved }> {
    const scope = { teamId: v.teamId, plusIds: [plusId], fileIds: [] };
    if (this.lexical?.has(v.teamId, plusId)) {
      const found = await this.repo.findWithLexemes(this.db, v, plusId, question);
      if (!found) throw notFound('Plus entry');
      const { entry, lexemes } = found;
      const index = this.lexical.current(v.teamId, plusId, entry.lexicalVersion);
      if (index && index.chunks === entry.chunkCount)
        return { entry, retrieved: await this.retrieval.search(this.db, { teamId: v.teamId, indexes: [index], n: entry.chunkCount, lexemes }, CANDIDATES) };
      return { entry, retrieved: await this.retrieval.search(this.db, { scope, question: { text: question } }, CANDIDATES, this.bulk) };
    }
    const found = await this.repo.findWithTerms(this.db, v, plusId, question);
    if (!found) throw notFound('Plus entry');
    const { entry, terms, tokens, files } = found;
    this.lexical?.current(v.teamId, plusId, entry.lexicalVersion);
    return { entry, retrieved: await this.retrieval.search(this.db, { scope, stats: { n: entry.chunkCount, tokens, files, terms } }, CANDIDATES, this.bulk) };
  }

  /**
   * The lexical ranking over several entries and a thread's files: from the entries' in-memory
   * indexes when every one is current and no thread file is in scope, else in SQL.
   */
  private async searchScope(scope: ChunkScope, entries: PlusRow[], question: Question): Promise<Retrieved> {
    if (this.lexical && scope.fileIds.length === 0 && entries.length > 0) {
      const indexes = entries.map((e) => this.lexical!.current(e.teamId, e.id, e.lexicalVersion));
      if (indexes.every((i, k) => i && i.chunks === entries[k]!.chunkCount)) {
        const n = entries.reduce((t, e) => t + e.chunkCount, 0);
        return this.retrieval.search(this.db, { teamId: scope.teamId, indexes: indexes as EntryIndex[], n, question }, CANDIDATES);
      }
    }
    return this.retrieval.search(this.db, { scope, question }, CANDIDATES, this.bulk);
  }

  /**
   * What fits the budget, with the texts of the chunks used read (only those: the in-memory
   * index ranks without texts). A chunk deleted since the search is left out and the plan made
   * again without it.
   */
  private async pack(
    intro: Array<{ title: string | null; text: string }>,
    chunks: ScoredChunk[],
    budget: number,
    alsoRead: readonly ScoredChunk[] = [],
    opts: PackOptions = {},
  ): Promise<{ plan: PackPlan; chunks: ScoredChunk[] }> {
    let list = chunks;
    for (;;) {
      const plan = planPack(intro, list, budget, opts);
      const gone = await this.retrieval.hydrate(this.db, [...plan.used, ...alsoRead.filter((c) => list.includes(c))]);
      if (gone.size === 0) return { plan, chunks: list };
      list = list.filter((c) => !gone.has(c.chunkId));
    }
  }

  /** An entry's ranking for a question, as context-for-prompt makes it: full text, fused with vectors and reranked when the team has those models. */
  private async rank(v: Viewer, plusId: string, question: string) {
    const { entry, retrieved } = await this.searchEntry(v, plusId, question);
    const scope = { teamId: v.teamId, plusIds: [plusId], fileIds: [] };
    const ranked = await this.reranked(entry.teamId, { text: question }, await this.withVectors(entry.teamId, scope, { text: question }, retrieved));
    return { entry, retrieved, ranked };
  }

  /**
   * The first `k` chunks context-for-prompt would rank for a question, with their texts, and how
   * the list was ranked (an evaluation set's run: modules/plus/evaluation.ts). Not found: the
   * entry is not visible to `v`.
   */
  async topChunks(v: Viewer, plusId: string, question: string, k: number): Promise<{ method: string; chunks: ScoredChunk[] }> {
    const { retrieved, ranked } = await this.rank(v, plusId, question);
    let top = ranked.slice(0, k);
    const gone = await this.retrieval.hydrate(this.db, top);
    if (gone.size > 0) top = top.filter((c) => !gone.has(c.chunkId));
    return { method: methodOf(top, retrieved), chunks: top };
  }

  /** An entry's context for a question (context-for-prompt), with how it was found when `explain`. */
  async forPrompt(
    v: Viewer,
    plusId: string,
    question: string,
    maxTokens = DEFAULT_CONTEXT_TOKENS,
    explain = false,
  ): Promise<Static<typeof ContextForPromptResponse>> {
    const { entry, retrieved, ranked } = await this.rank(v, plusId, question);
    const { plan, chunks } = await this.pack([{ title: null, text: entry.context ?? '' }], ranked, maxTokens, explain ? ranked : []);
    const packed = renderPack(plan);
    if (!explain) return { content: packed.content };
    const used = new Set(packed.used.map((c) => c.chunkId));
    const choice = retrieved.choice;
    const dfOf = new Map(retrieved.stats.terms.map((t) => [t.lexeme, t.df]));
    return {
      content: packed.content,
      explain: {
        method: methodOf(chunks, retrieved),
        terms: (choice?.rank ?? []).map((lexeme, i) => ({ lexeme, df: dfOf.get(lexeme) ?? 0, idf: round6(choice!.idf[i]!), carried: choice!.carried[i]! })),
        results: chunks.map((c) => ({
          rank: c.rank,
          score: round6(c.score),
          ranking: roundRanking(c.ranking),
          chunkId: c.chunkId,
          fileId: c.fileId,
          filename: c.filename,
          heading: c.heading,
          tokenSize: c.tokenSize,
          used: used.has(c.chunkId),
          excerpt: excerptOf(c.text ?? ''),
        })),
      },
    };
  }

  /** A chat turn's context: the named entries' and the thread's files', with its numbered sources. */
  async forTurn(v: Viewer, workspace: WorkspaceRow, q: TurnQuery): Promise<{ text: string; sources: StoredSource[] }> {
    // The request's entries must all be visible (else 404); the workspace's own are used when visible, skipped otherwise.
    const also = (q.workspacePlusIds ?? []).filter((id) => !q.plusIds.includes(id));
    const entries = await this.repo.findMany(this.db, v, [...q.plusIds, ...also]);
    if (entries.filter((e) => q.plusIds.includes(e.id)).length !== q.plusIds.length) throw notFound('Plus entry');
    const threadFiles = q.threadId ? await this.repo.threadFiles(this.db, v, q.threadId, workspace.contextType) : [];
    if (entries.length === 0 && threadFiles.length === 0) return { text: '', sources: [] };
    const scope = { teamId: v.teamId, plusIds: entries.map((e) => e.id), fileIds: threadFiles.map((f) => f.id) };
    const question = { text: q.query, carry: q.carry ?? null };
    const retrieved = await this.searchScope(scope, entries, question);
    // the relevance cut: a turn's sources leave out the candidates far weaker than the best
    const ranked = relevanceCut(await this.reranked(v.teamId, question, await this.withVectors(v.teamId, scope, question, retrieved)));
    // The passages are numbered as the sources are listed, so that the answer can cite them.
    const { plan } = await this.pack(
      entries.map((e) => ({ title: e.title, text: e.context ?? '' })),
      ranked,
      q.budgetTokens,
      [],
      { numbered: true },
    );
    const packed = renderPack(plan);
    if (!packed.content) return { text: '', sources: [] };
    const cite = packed.used.length > 0 ? ' When you use a numbered passage, cite it by its number in square brackets, like [1].' : '';
    return {
      text: `Use the following context from the team's documents when it helps answer.${cite}\n\n${packed.content}`,
      sources: packed.used.map((c) => ({
        plusId: c.plusId,
        fileId: c.fileId,
        filename: c.filename,
        chunkId: c.chunkId,
        score: round6(c.score),
        excerpt: excerptOf(c.text ?? ''),
        rank: c.rank,
        ranking: roundRanking(c.ranking),
      })),
    };
  }
}

/** How a list was ranked (explain's `method`). */
const methodOf = (chunks: readonly ScoredChunk[], retrieved: Retrieved): string =>
  chunks.length === 0 ? 'none' : chunks.some((c) => c.ranking.vector) ? 'hybrid' : retrieved.leading ? 'leading' : 'lexical';
const round6 = (x: number): number => Math.round(x * 1e6) / 1e6;
const excerptOf = (text: string): string => (text.length > EXCERPT_CHARS ? `${text.slice(0, EXCERPT_CHARS)}…` : text);
const roundIn = (r: RankIn | null): RankIn | null => r && { score: round6(r.score), rank: r.rank };
const roundRanking = (r: Ranking): Ranking => ({
  lexical: roundIn(r.lexical),
  vector: roundIn(r.vector),
  ...(r.rerank !== undefined ? { rerank: roundIn(r.rerank) } : {}),
});
