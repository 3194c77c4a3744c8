import { describe, expect, it } from 'vitest';
import { HYBRID, hybridRank, vectorWeight } from '../../src/retrieval/fusion.js';
import type { ScoredChunk } from '../../src/retrieval/repo.js';
import { relevanceCut, RELEVANCE_CUT, VECTOR_KEEP } from '../../src/retrieval/relevance.js';
import { followUpVector } from '../../src/retrieval/vector.js';

const chunk = (chunkId: number, score: number): ScoredChunk => ({
  chunkId,
  fileId: 'f',
  filename: 'f.txt',
  plusId: 'p',
  heading: null,
  text: `chunk ${chunkId}`,
  tokenSize: 10,
  score,
  rank: 0,
  ranking: { lexical: null, vector: null },
});

// full text: chunks 1..10, scores 10, 9, …, 1
const lexical = { chunks: Array.from({ length: 10 }, (_, i) => chunk(i + 1, 10 - i)), leading: false };
const ids = (cs: ScoredChunk[]) => cs.map((c) => c.chunkId);

describe('hybrid fusion', () => {
  it('a vector list that disagrees with full text (an unrelated model) leaves full text’s order', () => {
    // cosines rising as full text's scores fall: the opposite ranking, plus vector-only chunks
    const near = [...Array.from({ length: 10 }, (_, i) => chunk(10 - i, 0.9 - i * 0.05)), chunk(50, 0.4), chunk(51, 0.3)];
    expect(vectorWeight(lexical.chunks, new Map(near.map((c) => [c.chunkId, c.score])), 0.3)).toBe(0);
    const fused = hybridRank(lexical, near);
    expect(ids(fused).slice(0, 10)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(ids(fused).slice(10)).toEqual([50, 51]);
  });

  it('a vector list that agrees reorders near-ties of full text, and a vector-only chunk never passes a strong full-text one', () => {
    // full text: 1 clearly first, 2 and 3 nearly tied; the vectors agree overall but prefer 3 to 2
    const scores = [10, 8, 7.9, 6, 5, 4, 3, 2, 1, 0.5];
    const lex = { chunks: scores.map((x, i) => chunk(i + 1, x)), leading: false };
    const cos = [0.9, 0.6, 0.85, 0.55, 0.5, 0.45, 0.4, 0.35, 0.32, 0.3];
    const near = [chunk(99, 0.95), ...cos.map((c, i) => chunk(i + 1, c))].sort((a, b) => b.score - a.score);
    const weight = vectorWeight(lex.chunks, new Map(near.map((c) => [c.chunkId, c.score])), 0.3);
    expect(weight).toBeGreaterThan(0.8 * HYBRID.weight);
    expect(weight).toBeLessThanOrEqual(HYBRID.weight);
    const fused = hybridRank(lex, near);
    expect(ids(fused).slice(0, 3)).toEqual([1, 3, 2]);
    // chunk 99 (vector only, the nearest of all) scores at most the weight: below every full-text chunk scoring more
    const at = ids(fused).indexOf(99);
    expect(fused[at]!.score).toBeLessThanOrEqual(HYBRID.weight);
    for (const c of fused.slice(0, at)) expect(c.ranking.lexical).not.toBeNull();
    expect(fused.find((c) => c.chunkId === 1)!.ranking).toEqual({ lexical: { score: 10, rank: 1 }, vector: { score: 0.9, rank: 2 } });
    expect(fused.map((c) => c.rank)).toEqual(fused.map((_, i) => i + 1));
  });

  it('the cosines of full text’s candidates the vector list left out count in the agreement', () => {
    const near = [chunk(50, 0.9), chunk(51, 0.8), chunk(52, 0.7)];
    const agreeing = new Map(lexical.chunks.map((c) => [c.chunkId, 0.1 + c.score / 20]));
    expect(vectorWeight(lexical.chunks, agreeing, 0.7)).toBeCloseTo(HYBRID.weight, 6); // perfectly correlated
    expect(vectorWeight(lexical.chunks, new Map(), 0.7)).toBe(0);
    expect(ids(hybridRank(lexical, near, agreeing)).slice(0, 1)).toEqual([1]);
  });

  it('no vector list: full text unchanged; opening chunks only (nothing matched): the vector order', () => {
    expect(hybridRank(lexical, [])).toEqual(lexical.chunks);
    const leading = { chunks: [chunk(1, 0), chunk(2, 0)], leading: true };
    const near = [chunk(7, 0.9), chunk(8, 0.5)];
    expect(ids(hybridRank(leading, near))).toEqual([7, 8]);
  });

  it('a follow-up’s vector weighs in its previous question and stays of unit length', () => {
    const v = followUpVector([1, 0], [0, 1]);
    expect(Math.hypot(...v)).toBeCloseTo(1, 9);
    expect(v[0]).toBeGreaterThan(v[1]!);
    expect(v[1]).toBeGreaterThan(0);
    expect(followUpVector([1, 0], null)).toEqual([1, 0]);
  });
});

describe('relevance cut of a turn’s sources', () => {
  const ranked = (cs: Array<[number, number | null, number | null]>) =>
    cs.map(([id, lex, vecRank]) => ({
      ...chunk(id, lex ?? 0),
      ranking: { lexical: lex === null ? null : { score: lex, rank: 1 }, vector: vecRank === null ? null : { score: 0.5, rank: vecRank } },
    }));

  it('drops full-text chunks under RELEVANCE_CUT of the best and vector-only ones beyond the vector list’s first VECTOR_KEEP', () => {
    const list = ranked([
      [1, 10, null],
      [2, 10 * RELEVANCE_CUT, null],
      [3, 10 * RELEVANCE_CUT - 0.01, 1],
      [4, null, VECTOR_KEEP],
      [5, null, VECTOR_KEEP + 1],
    ]);
    expect(ids(relevanceCut(list))).toEqual([1, 2, 4]);
  });

  it('keeps a reranked list, and opening chunks (no score), whole', () => {
    const opening = ranked([
      [1, 0, null],
      [2, 0, null],
    ]);
    expect(ids(relevanceCut(opening))).toEqual([1, 2]);
    const reranked = ranked([
      [1, 10, null],
      [2, 0.1, null],
    ]).map((c, i) => ({ ...c, ranking: { ...c.ranking, rerank: { score: -i, rank: i + 1 } } }));
    expect(ids(relevanceCut(reranked))).toEqual([1, 2]);
  });
});
