/**
 * The one lexical scorer (src/retrieval/score.ts): BM25 with its boosts and file-length prior
 * computed from a candidate's features, and the order of scored candidates (ties). Pure: the
 * storages' features are compared in lexical-index.test.ts.
 */
import { describe, expect, it } from 'vitest';
import type { TermChoice } from '../../src/retrieval/query.js';
import { NEAR_HIT, PHRASE, rankScored, scoreOf, type Features } from '../../src/retrieval/score.js';

const choice = (idf: number[], pairs: number[] = []): TermChoice => ({
  rank: idf.map((_, i) => `l${i}`),
  idf,
  carried: idf.map(() => false),
  pairs: pairs.map((p, i) => ({ a: `l${i}`, b: `l${i + 1}`, distance: 1, idf: p })),
  steps: [],
});

const features = (over: Partial<Features>): Features => ({
  chunkId: 1,
  fileId: 'f',
  plusId: 'p',
  tokenSize: 100,
  fileTokens: 0,
  tf: [1],
  headings: 0,
  pairs: [],
  ...over,
});

describe('scoreOf', () => {
  it('is BM25: tf saturates (k1 = 1.2), a chunk of average length scores idf × tf·2.2/(tf + 1.2)', () => {
    const c = choice([2]);
    expect(scoreOf(features({ tf: [1] }), c, 100, 0)).toBeCloseTo(2, 12);
    expect(scoreOf(features({ tf: [3] }), c, 100, 0)).toBeCloseTo((2 * 3 * 2.2) / 4.2, 12);
    expect(scoreOf(features({ tf: [10] }), c, 100, 0)).toBeLessThan(2 * 2.2);
    expect(scoreOf(features({ tf: [0] }), c, 100, 0)).toBe(0);
  });

  it('normalises by length (b = 0.75): a longer chunk scores less for the same tf; no average, no normalisation', () => {
    const c = choice([1]);
    // len = 2 × average: norm = 1.2 × (0.25 + 1.5) = 2.1
    expect(scoreOf(features({ tokenSize: 200 }), c, 100, 0)).toBeCloseTo(2.2 / 3.1, 12);
    expect(scoreOf(features({ tokenSize: 200 }), c, 0, 0)).toBeCloseTo(1, 12);
  });

  it('adds 0.6 × idf for a lexeme in the headings (bit i for lexeme i), even with no tf', () => {
    const c = choice([1, 3]);
    expect(scoreOf(features({ tf: [0, 0], headings: 0b10 }), c, 100, 0)).toBeCloseTo(0.6 * 3, 12);
    expect(scoreOf(features({ tf: [0, 0], headings: 0b01 }), c, 100, 0)).toBeCloseTo(0.6, 12);
  });

  it('adds 0.5 × the pair idf for a phrase, 0.25 × for near', () => {
    const c = choice([1, 1], [2]);
    const base = scoreOf(features({ tf: [1, 1], pairs: [0] }), c, 100, 0);
    expect(base).toBeCloseTo(2, 12);
    expect(scoreOf(features({ tf: [1, 1], pairs: [PHRASE] }), c, 100, 0) - base).toBeCloseTo(1, 12);
    expect(scoreOf(features({ tf: [1, 1], pairs: [NEAR_HIT] }), c, 100, 0) - base).toBeCloseTo(0.5, 12);
  });

  it('divides by the file-length prior for a file longer than average (1 + 0.3 × (√ratio − 1)), never for a shorter one', () => {
    const c = choice([2]);
    expect(scoreOf(features({ fileTokens: 4000 }), c, 100, 1000)).toBeCloseTo(2 / 1.3, 12);
    expect(scoreOf(features({ fileTokens: 500 }), c, 100, 1000)).toBe(2);
    expect(scoreOf(features({ fileTokens: 4000 }), c, 100, 0)).toBe(2);
  });
});

describe('rankScored', () => {
  const hit = (chunkId: number, fileId: string, score: number, tokenSize = 10) => ({ chunkId, fileId, score, tokenSize });

  it('orders by score, best first, and keeps the best `limit`', () => {
    const r = rankScored([hit(1, 'a', 1), hit(2, 'b', 3), hit(3, 'c', 2)], 2);
    expect(r.map((h) => h.chunkId)).toEqual([2, 3]);
  });

  it('ties (equal to 9 decimals): a file’s best before another file’s second, then the shorter chunk, then the id', () => {
    const r = rankScored([hit(1, 'a', 1), hit(2, 'a', 1 + 1e-12), hit(3, 'b', 1, 20), hit(4, 'c', 1, 5), hit(5, 'c', 1, 5)], 10);
    // firsts of their files: 4 (5 tokens), 2 (unrounded better than 1), 3 (20 tokens); then seconds: 5 (5 tokens), 1
    expect(r.map((h) => h.chunkId)).toEqual([4, 2, 3, 5, 1]);
  });

  it('a tie across the limit is decided the same way as inside it', () => {
    const all = [hit(1, 'a', 2), hit(2, 'a', 1), hit(3, 'b', 1, 50)];
    expect(rankScored([...all], 2).map((h) => h.chunkId)).toEqual([1, 3]);
  });
});
