/**
 * What searchSql does after scoring, done over the indexes' hits: term statistics of the question,
 * PostgreSQL's rounding of tied scores, and the final order.
 */
import { DERIVED_MAX_CUT, PREFIX_MIN_CHARS, STEM_MIN_CHARS, TIE_DECIMALS } from '../scoring.js';
import type { TermStat } from '../query.js';
import type { EntryIndex, Hit } from './entry-index.js';
import type { QuestionLexeme } from './question-lexemes.js';

/**
 * round(x::numeric, TIE_DECIMALS) × 10^TIE_DECIMALS, as PostgreSQL computes it: float8 → numeric
 * keeps 15 significant digits, then round() goes half away from zero.
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

/**
 * The best `limit` hits of several entries' candidates, in searchSql's order: score (as rounded:
 * tieKey) descending, then diversity (a file's n-th best after every file's (n−1)-th), the shorter
 * chunk, the chunk id. One sort by score gives every hit its place in its file; rounding keeps
 * that order, so only the first `limit` and the hits tied with the last of them are rounded and
 * sorted again.
 */
export function orderHits(hits: Hit[], limit: number): Hit[] {
  hits.sort((a, b) => b.score - a.score || a.tokenSize - b.tokenSize || a.chunkId - b.chunkId);
  const counts = new Map<EntryIndex, Int32Array>();
  for (const h of hits) {
    let perFile = counts.get(h.index);
    if (!perFile) counts.set(h.index, (perFile = new Int32Array(h.index.files.length)));
    h.inFile = ++perFile[h.file]!;
  }
  let end = Math.min(limit, hits.length);
  if (end === 0) return [];
  const last = tieKey(hits[end - 1]!.score);
  while (end < hits.length && tieKey(hits[end]!.score) === last) end++;
  const top = hits.slice(0, end).map((h) => ({ h, key: tieKey(h.score) }));
  top.sort((a, b) => b.key - a.key || a.h.inFile - b.h.inFile || a.h.tokenSize - b.h.tokenSize || a.h.chunkId - b.h.chunkId);
  return top.slice(0, limit).map((t) => t.h);
}

/**
 * The question's term statistics over several entries' indexes, as termStatsSql computes them
 * over plus_terms: each lexeme the entries hold with its df summed over them; a lexeme none holds,
 * of at least PREFIX_MIN_CHARS letters a–z, stands for their commonest lexeme beginning with all
 * of it but its last letter (ties: the first in byte order), else for the longest lexeme it
 * begins with, at most DERIVED_MAX_CUT letters shorter and of at least STEM_MIN_CHARS.
 */
export function indexTermStats(parts: readonly EntryIndex[], lexemes: readonly QuestionLexeme[]): TermStat[] {
  const rows = new Map<string, { direct: number | null; prefix: number; pos: number | null; carried: boolean }>();
  const add = (lexeme: string, df: number, prefix: boolean, q: QuestionLexeme) => {
    const r = rows.get(lexeme) ?? { direct: null, prefix: 0, pos: null, carried: true };
    if (prefix) r.prefix = Math.max(r.prefix, df);
    else r.direct = (r.direct ?? 0) + df;
    if (q.pos !== null) r.pos = r.pos === null ? q.pos : Math.min(r.pos, q.pos);
    r.carried &&= q.carried;
    rows.set(lexeme, r);
  };
  for (const q of lexemes) {
    const df = parts.reduce((n, p) => n + p.df(q.lexeme), 0);
    if (df > 0) add(q.lexeme, df, false, q);
    else if (q.lexeme.length >= PREFIX_MIN_CHARS && /^[a-z]+$/.test(q.lexeme)) {
      const found = new Map<string, number>();
      for (const p of parts) for (const [l, n] of p.withPrefix(q.lexeme.slice(0, -1))) found.set(l, (found.get(l) ?? 0) + n);
      let best: [string, number] | null = null;
      for (const [l, n] of found) if (!best || n > best[1] || (n === best[1] && l < best[0])) best = [l, n];
      // else the longest lexeme it begins with (a derived form: "compressor" → compress)
      for (let cut = 1; !best && cut <= DERIVED_MAX_CUT && q.lexeme.length - cut >= STEM_MIN_CHARS; cut++) {
        const stem = q.lexeme.slice(0, -cut);
        const n = parts.reduce((t, p) => t + p.df(stem), 0);
        if (n > 0) best = [stem, n];
      }
      if (best) add(best[0], best[1], true, q);
    }
  }
  return [...rows].map(([lexeme, r]) => ({
    lexeme,
    df: r.direct ?? r.prefix,
    ...(r.pos === null ? {} : { pos: r.pos }),
    ...(r.carried ? { carried: true } : {}),
  }));
}
