/** The question's term statistics over in-memory indexes, as termStatsSql reads them from plus_terms. */
import { DERIVED_MAX_CUT, PREFIX_MIN_CHARS, STEM_MIN_CHARS } from '../scoring.js';
import type { TermStat } from '../query.js';
import type { EntryIndex } from './entry-index.js';
import type { QuestionLexeme } from './question-lexemes.js';

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
