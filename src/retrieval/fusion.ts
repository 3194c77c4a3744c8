import type { Ranking, ScoredChunk } from './repo.js';

/**
 * Hybrid ranking: the full-text list and the vector list combined by normalised scores, with a
 * guard so that a weak or unrelated embedding model cannot sink a strong full-text list.
 *
 * - Full text's score is divided by its best (1 for its first chunk); a chunk it did not find
 *   has 0.
 * - A chunk's cosine similarity is placed between the lowest and the highest of the vector
 *   list's (0 to 1, clipped); a chunk the vector list left out has the cosine the vector search
 *   read for it (full text's first candidates), or 0.
 * - fused = full text + weight × vector, where weight = HYBRID.weight × agreement: how far the
 *   two rankings agree on full text's first `agreementTop` candidates (Pearson's correlation of
 *   score and cosine, × agreementScale, clipped to 0..1). A model whose similarities say
 *   nothing about the question's words (random, unrelated, a different language) gets weight
 *   ~0 and leaves full text's order; a model that agrees reorders within it, and brings in
 *   chunks only it finds below full text's strong ones (a vector-only chunk scores at most
 *   `weight` ≤ 0.3, under every full-text chunk scoring more than 0.3 of the best).
 *
 * The constants were chosen on the project's labelled sets (bench/retrieval-data/, with USE Lite
 * and with random vectors standing for an unrelated model): docs/DECISIONS.md, "Hybrid fusion".
 */
export const HYBRID = Object.freeze({ weight: 0.3, agreementTop: 20, agreementScale: 1 });
/** Agreement when full text has too few candidates to measure it (fewer than 3). */
const AGREEMENT_UNKNOWN = 0.5;

function pearson(xs: readonly number[], ys: readonly number[]): number {
  const n = xs.length;
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < n; i++) {
    sxy += (xs[i]! - mx) * (ys[i]! - my);
    sxx += (xs[i]! - mx) ** 2;
    syy += (ys[i]! - my) ** 2;
  }
  return sxx > 0 && syy > 0 ? sxy / Math.sqrt(sxx * syy) : 0;
}

/**
 * The weight the vector list gets for this question: HYBRID.weight × the agreement of the two
 * rankings on full text's first candidates (their cosines in `cosines`).
 */
export function vectorWeight(lexical: readonly ScoredChunk[], cosines: ReadonlyMap<number, number>, floor: number): number {
  const top = lexical.slice(0, HYBRID.agreementTop);
  if (top.length < 3) return HYBRID.weight * AGREEMENT_UNKNOWN;
  const r = pearson(
    top.map((c) => c.score),
    top.map((c) => cosines.get(c.chunkId) ?? floor),
  );
  return HYBRID.weight * Math.min(1, Math.max(0, r * HYBRID.agreementScale));
}

/**
 * The hybrid list PlusContext packs from (best first, at most `limit`): `lexical` (full text's
 * list; `leading`: the documents' opening chunks, which are not a ranking) and `near` (the vector
 * list, nearest first, score = cosine), with `cosines` the cosine of any other chunk the vector
 * search read (full text's first candidates). Each result's `score` is its fused score, `rank`
 * its place, `ranking` its place in each list. Ties go to the chunk full text found, then to the
 * better single rank, then to the lower chunk id.
 */
export function hybridRank(
  lexical: { chunks: readonly ScoredChunk[]; leading: boolean },
  near: readonly ScoredChunk[],
  cosines: ReadonlyMap<number, number> = new Map(),
  limit = 50,
): ScoredChunk[] {
  if (near.length === 0) return [...lexical.chunks];
  const lex = lexical.leading ? [] : lexical.chunks;
  const hi = near[0]!.score;
  const lo = near.at(-1)!.score;
  const cos = new Map(cosines);
  for (const c of near) cos.set(c.chunkId, c.score);
  const vn = (id: number) => {
    const c = cos.get(id);
    if (c === undefined) return 0;
    return hi > lo ? Math.min(1, Math.max(0, (c - lo) / (hi - lo))) : 1;
  };
  const best = lex[0]?.score ?? 0;
  const weight = lex.length === 0 ? 1 : vectorWeight(lex, cos, lo);
  const byId = new Map<number, { chunk: ScoredChunk; ranking: Ranking }>();
  lex.forEach((c, i) => {
    if (!byId.has(c.chunkId)) byId.set(c.chunkId, { chunk: c, ranking: { lexical: { score: c.score, rank: i + 1 }, vector: null } });
  });
  near.forEach((c, i) => {
    const hit = byId.get(c.chunkId);
    if (hit) hit.ranking.vector ??= { score: c.score, rank: i + 1 };
    else byId.set(c.chunkId, { chunk: c, ranking: { lexical: null, vector: { score: c.score, rank: i + 1 } } });
  });
  const fused = (e: { chunk: ScoredChunk; ranking: Ranking }) =>
    (e.ranking.lexical && best > 0 ? e.ranking.lexical.score / best : 0) + weight * vn(e.chunk.chunkId);
  const single = (r: Ranking) => Math.min(r.lexical?.rank ?? Infinity, r.vector?.rank ?? Infinity);
  return [...byId.values()]
    .map((e) => ({ ...e, fused: fused(e) }))
    .sort(
      (a, b) =>
        b.fused - a.fused ||
        (a.ranking.lexical ? 0 : 1) - (b.ranking.lexical ? 0 : 1) ||
        single(a.ranking) - single(b.ranking) ||
        a.chunk.chunkId - b.chunk.chunkId,
    )
    .slice(0, limit)
    .map((e, i) => ({ ...e.chunk, score: e.fused, rank: i + 1, ranking: e.ranking }));
}

/** The full-text candidates whose cosines hybridRank needs (its agreement measure), when the vector list left them out. */
export function lexicalTop(lexical: { chunks: readonly ScoredChunk[]; leading: boolean }): number[] {
  return lexical.leading ? [] : lexical.chunks.slice(0, HYBRID.agreementTop).map((c) => c.chunkId);
}
