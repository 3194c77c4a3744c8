/**
 * THE lexical scorer and order. Storage — SQL over the tsvector column (search-sql.ts) or an
 * in-memory index (lexical-index/entry-index.ts) — finds a step's candidates and reads, per
 * candidate, its features; the score and the order are computed here, once, for both.
 */
import { BM25, BOOSTS, FILE_PRIOR, TIE_DECIMALS } from './scoring.js';
import type { TermChoice } from './query.js';

/** What storage reads of one candidate chunk for a term choice: all the scorer needs. */
export interface Features {
  chunkId: number;
  fileId: string;
  plusId: string;
  /** the chunk's tokens (BM25's length) */
  tokenSize: number;
  /** its file's tokens (the file-length prior; 0 when not read: no prior) */
  fileTokens: number;
  /** per ranking lexeme (choice.rank's order): its occurrences in the chunk's text, headings not counted */
  tf: number[];
  /** bit i set: ranking lexeme i is in the chunk's section headings */
  headings: number;
  /** per neighbouring pair (choice.pairs' order): PHRASE, NEAR or 0 */
  pairs: number[];
}

/** A pair of the question's lexemes found at the same distance as in the question. */
export const PHRASE = 2;
/** …or within NEAR positions of each other, either order. */
export const NEAR_HIT = 1;

/**
 * A candidate's score: BM25 over its text — for each ranking lexeme, idf × tf(k1 + 1) / (tf +
 * k1(1 − b + b·len/avglen)) — plus the boosts (BOOSTS: the lexeme in the headings, neighbouring
 * lexemes as a phrase or near each other), divided by the file-length prior (FILE_PRIOR) when
 * `avgFile`, the scope's average file tokens, is known. `avgLen` 0: no length normalisation.
 */
export function scoreOf(f: Features, choice: TermChoice, avgLen: number, avgFile: number): number {
  const { k1, b } = BM25;
  const norm = avgLen > 0 ? k1 * (1 - b + (b * f.tokenSize) / avgLen) : k1;
  let score = 0;
  for (let i = 0; i < choice.rank.length; i++) {
    const tf = f.tf[i] ?? 0;
    const heading = (f.headings >> i) & 1 ? BOOSTS.heading : 0;
    score += choice.idf[i]! * ((tf * (k1 + 1)) / (tf + norm) + heading);
  }
  for (let p = 0; p < choice.pairs.length; p++) {
    const hit = f.pairs[p];
    score += choice.pairs[p]!.idf * (hit === PHRASE ? BOOSTS.phrase : hit === NEAR_HIT ? BOOSTS.near : 0);
  }
  if (avgFile > 0) score = score / (1 + FILE_PRIOR * Math.max(0, Math.sqrt(f.fileTokens / avgFile) - 1));
  return score;
}

/**
 * round(x::numeric, TIE_DECIMALS) × 10^TIE_DECIMALS, as PostgreSQL computes it (the rounding the
 * ranking has always used): float8 → numeric keeps 15 significant digits, then round() goes half
 * away from zero.
 */
export function tieKey(x: number): number {
  if (x === 0 || !Number.isFinite(x)) return 0;
  // Far from a rounding boundary the 15-digit conversion cannot change the result (it moves
  // x by < 1e-12 for the scores there are, < 0.01 once scaled): round directly.
  const scaled = x * 10 ** TIE_DECIMALS;
  if (Math.abs(scaled) < 2 ** 50) {
    const frac = Math.abs(scaled) % 1;
    if (Math.abs(frac - 0.5) > 0.01 && Math.abs(x) < 1e4) return Math.sign(x) * Math.round(Math.abs(scaled));
  }
  const neg = x < 0;
  const [mant, exp = '0'] = Math.abs(x).toPrecision(15).split('e');
  const [int, frac = ''] = mant!.split('.');
  const digits = int! + frac;
  const point = int!.length + Number(exp); // digits before the decimal point
  const keep = point + TIE_DECIMALS; // digits kept
  if (keep < 0) return 0;
  const kept = digits.padEnd(keep + 1, '0');
  let v = keep === 0 ? 0 : Number(kept.slice(0, keep));
  if (kept.charCodeAt(keep) >= 53) v += 1;
  return neg ? -v : v;
}

/** A scored candidate as the order sees it. */
export interface Scored {
  chunkId: number;
  fileId: string;
  tokenSize: number;
  score: number;
}

/**
 * The best `limit` of a step's scored candidates, best first: score (rounded to TIE_DECIMALS:
 * tieKey) descending, then diversity (a file's n-th best after every file's (n−1)-th; a file's
 * chunks ordered by unrounded score, the shorter, the id), the shorter chunk, the chunk id —
 * never document order alone. One sort by score gives every candidate its place in its file;
 * rounding keeps that order, so only the first `limit` and those tied with the last of them are
 * rounded and sorted again.
 */
export function rankScored<T extends Scored>(hits: T[], limit: number): T[] {
  hits.sort((a, b) => b.score - a.score || a.tokenSize - b.tokenSize || a.chunkId - b.chunkId);
  const inFile = new Int32Array(hits.length);
  const perFile = new Map<string, number>();
  hits.forEach((h, i) => {
    const n = (perFile.get(h.fileId) ?? 0) + 1;
    perFile.set(h.fileId, n);
    inFile[i] = n;
  });
  let end = Math.min(limit, hits.length);
  if (end === 0) return [];
  const last = tieKey(hits[end - 1]!.score);
  while (end < hits.length && tieKey(hits[end]!.score) === last) end++;
  const top = hits.slice(0, end).map((h, i) => ({ h, key: tieKey(h.score), inFile: inFile[i]! }));
  top.sort((a, b) => b.key - a.key || a.inFile - b.inFile || a.h.tokenSize - b.h.tokenSize || a.h.chunkId - b.h.chunkId);
  return top.slice(0, limit).map((t) => t.h);
}
