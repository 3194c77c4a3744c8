import type { ScoredChunk } from './repo.js';

/**
 * The relevance cut of a chat turn's sources: what the answer is given and shows as its sources
 * leaves out the candidates that are far weaker than the best, so a question that matches one
 * passage well does not come with a tail of passages that share a common word with it.
 *
 * - A chunk full text found stays when its full-text score is at least RELEVANCE_CUT × the best
 *   full-text score of the list (BM25 scores are comparable within one question).
 * - A chunk only the vectors found stays when it is among the vector list's first VECTOR_KEEP.
 * - A list in a rerank model's order, or of opening chunks (score 0: nothing matched), is kept
 *   whole: the rerank model's scores have no known scale, and opening chunks no score.
 *
 * Measured on the labelled sets (bench/retrieval-data/): at 0.3 no answering chunk of the top 5
 * falls under the cut (the weakest was 0.44 of the best); 0.25 leaves a margin.
 */
export const RELEVANCE_CUT = 0.25;
export const VECTOR_KEEP = 5;

export function relevanceCut(ranked: readonly ScoredChunk[]): ScoredChunk[] {
  if (ranked.some((c) => c.ranking.rerank)) return [...ranked];
  const best = Math.max(0, ...ranked.map((c) => c.ranking.lexical?.score ?? 0));
  if (best <= 0) return [...ranked];
  return ranked.filter((c) => (c.ranking.lexical ? c.ranking.lexical.score >= RELEVANCE_CUT * best : (c.ranking.vector?.rank ?? Infinity) <= VECTOR_KEEP));
}
