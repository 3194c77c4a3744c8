import type { Ranking, ScoredChunk } from './repo.js';

/**
 * Hybrid ranking: reciprocal rank fusion (Cormack, Clarke & Büttcher, SIGIR 2009) of the
 * full-text ranking and the vector ranking. A chunk's fused score is Σ 1 / (k + rank) over the
 * rankings it appears in (rank 1 = best), so it needs no calibration between BM25-like scores and
 * cosine similarities, and a chunk only one of them finds still competes. k = 60 is the paper's
 * constant (docs/DECISIONS.md, "Hybrid retrieval").
 */
export const RRF_K = 60;

/**
 * The fused ordering of two rankings (each best first, at most one entry per chunk id). `score` of
 * each result is the fused score, `rank` its 1-based place, `ranking` its place in each list. Ties on the fused score go to the
 * chunk with the better single rank, then to the lexical one, then to the lower chunk id.
 */
export function fuseByRank(lexical: readonly ScoredChunk[], vector: readonly ScoredChunk[], k = RRF_K): ScoredChunk[] {
  const byId = new Map<number, { chunk: ScoredChunk; ranking: Ranking }>();
  lexical.forEach((c, i) => {
    if (!byId.has(c.chunkId)) byId.set(c.chunkId, { chunk: c, ranking: { lexical: { score: c.score, rank: i + 1 }, vector: null } });
  });
  vector.forEach((c, i) => {
    const hit = byId.get(c.chunkId);
    if (hit) hit.ranking.vector ??= { score: c.score, rank: i + 1 };
    else byId.set(c.chunkId, { chunk: c, ranking: { lexical: null, vector: { score: c.score, rank: i + 1 } } });
  });
  const fusedScore = (r: Ranking) => (r.lexical ? 1 / (k + r.lexical.rank) : 0) + (r.vector ? 1 / (k + r.vector.rank) : 0);
  const best = (r: Ranking) => Math.min(r.lexical?.rank ?? Infinity, r.vector?.rank ?? Infinity);
  return [...byId.values()]
    .map((e) => ({ ...e, fused: fusedScore(e.ranking) }))
    .sort(
      (a, b) =>
        b.fused - a.fused ||
        best(a.ranking) - best(b.ranking) ||
        (a.ranking.lexical ? 0 : 1) - (b.ranking.lexical ? 0 : 1) ||
        a.chunk.chunkId - b.chunk.chunkId,
    )
    .map((e, i) => ({ ...e.chunk, score: e.fused, rank: i + 1, ranking: e.ranking }));
}
