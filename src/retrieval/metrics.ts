/**
 * How well a ranked list finds what answers a question (binary relevance): the rank of the first
 * answering item, recall@5 (it is in the top 5), reciprocal rank at 10 (1/rank within the top 10,
 * else 0) and nDCG@10 (the answering items' places in the top 10 against the best possible order).
 * The quality benchmark and a Plus entry's evaluation set score their lists with this one function.
 */
export const K_RECALL = 5;
export const K_MRR = 10;
export const K_NDCG = 10;

export interface RankScores {
  /** 1-based rank of the first answering item, 0 if none in the list */
  first: number;
  recall: number;
  rr: number;
  ndcg: number;
}

/** `relevant`: every item that answers (`ideal` counts them when they are not all known by id). */
export function scoreRanking(ranked: readonly number[], relevant: ReadonlySet<number>, ideal = relevant.size): RankScores {
  const at = ranked.findIndex((id) => relevant.has(id));
  let dcg = 0;
  ranked.slice(0, K_NDCG).forEach((id, i) => {
    if (relevant.has(id)) dcg += 1 / Math.log2(i + 2);
  });
  let best = 0;
  for (let i = 0; i < Math.min(ideal, K_NDCG); i++) best += 1 / Math.log2(i + 2);
  return {
    first: at + 1,
    recall: at >= 0 && at < K_RECALL ? 1 : 0,
    rr: at >= 0 && at < K_MRR ? 1 / (at + 1) : 0,
    ndcg: best > 0 ? Math.min(1, dcg / best) : 0,
  };
}
