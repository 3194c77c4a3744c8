/**
 * Term selection for full-text retrieval (IDF-style).
 *
 * A question's lexemes (English stemming, stop words removed: `to_tsvector('english', …)`) come
 * with their document frequency `df` — how many chunks in scope contain them — and the scope's
 * chunk count `n`. A search ranks every chunk its tsquery matches before it keeps the best ones,
 * so its cost follows the number of matching chunks; common words ("licence" in a collection of
 * licences, "use", "file") match a large share of them and say little about which chunk answers.
 * So, much as a search engine's "common terms" query does:
 *
 * - the question's rarest lexemes (at most `maxTerms`) rank the candidates (BM25: score.ts), so a
 *   chunk holding more of them, and rarer ones, comes first;
 * - a chunk holding one of the rarest lexemes — taken rarest first while their df add up to at
 *   most `budget` chunks — is a candidate (`single`): a chunk need not hold every word of a
 *   question phrased differently from it;
 * - the commoner lexemes make a chunk a candidate only in pairs, in steps that widen only while
 *   fewer chunks than wanted were found: first the two rarest together, then any two of the
 *   `maxPaired` rarest, then the rarest one alone; each step leaves out what the earlier ones
 *   matched, and its chunks rank after theirs;
 * - when even the rarest lexeme is in more than max(commonShare·n, commonFloor) chunks, only
 *   chunks holding all of the question's lexemes are candidates.
 *
 * On a small entry all the lexemes fit the budget and this is one OR of the (≤ maxTerms) rarest
 * lexemes. Ties on df are broken by the lexeme, so the choice is deterministic.
 */

export interface TermStat {
  lexeme: string;
  /** chunks in scope containing the lexeme */
  df: number;
  /** the lexeme's first position in the question (phrase and proximity boosts); absent: unknown */
  pos?: number;
  /** carried from the previous question of a thread (a follow-up), not in this one */
  carried?: boolean;
}

/** Two of the question's lexemes next to each other in it, `distance` positions apart (stop words count). */
export interface TermPair {
  a: string;
  b: string;
  distance: number;
  /** the smaller idf of the two: what finding them together adds */
  idf: number;
}

export interface Step {
  /** what makes a chunk a candidate in this step (for reports) */
  kind: 'any' | 'rare or rarest pair' | 'any pair' | 'rarest' | 'all';
  /** tsquery literal the chunks must match, earlier steps' matches excluded */
  match: string;
  /** `match` as lexemes: a chunk holding every lexeme of one of `clauses`, and of none of `excluded` (the previous step's clauses) */
  clauses: string[][];
  excluded: string[][];
}

export interface TermChoice {
  /** the lexemes that rank the candidates, rarest first */
  rank: string[];
  /** their weights: BM25's inverse document frequency ln(1 + (n − df + 0.5)/(df + 0.5)), times CARRY_WEIGHT for a carried lexeme */
  idf: number[];
  /** which of them were carried from the previous question (follow-ups) */
  carried: boolean[];
  /** neighbouring lexemes of the question (not carried ones), for the phrase and proximity boosts */
  pairs: TermPair[];
  /** candidate sets, tried in order while fewer chunks than wanted have been found */
  steps: Step[];
}

export interface TermOptions {
  /** lexemes used at all (the rarest ones) */
  maxTerms: number;
  /** the `single` lexemes' df add up to at most this many chunks */
  budget: number;
  /** at most this many lexemes are paired */
  maxPaired: number;
  /** a lexeme in more than max(commonShare × n, commonFloor) chunks is very common */
  commonShare: number;
  commonFloor: number;
}

/** A follow-up's carried lexemes weigh this much of their idf: the new question's own words lead. */
export const CARRY_WEIGHT = 0.5;
/** At most this many lexemes are carried from the previous question (its rarest ones). */
export const MAX_CARRIED = 4;

/** BM25's inverse document frequency (never negative: a lexeme in every chunk still counts a little). */
export const bm25Idf = (n: number, df: number): number => Math.log(1 + (Math.max(n, df) - df + 0.5) / (df + 0.5));

export const TERM_OPTIONS: Readonly<TermOptions> = Object.freeze({
  maxTerms: 8,
  budget: 300,
  maxPaired: 4,
  commonShare: 0.2,
  commonFloor: 1000,
});

const byDf = (a: TermStat, b: TermStat) => a.df - b.df || (a.lexeme < b.lexeme ? -1 : a.lexeme > b.lexeme ? 1 : 0);

/** The question's lexemes that occur in scope, rarest first (each once). */
export function presentTerms(stats: readonly TermStat[]): TermStat[] {
  const seen = new Set<string>();
  return stats.filter((s) => s.df > 0 && !seen.has(s.lexeme) && seen.add(s.lexeme)).sort(byDf);
}

/** A tsquery literal quoting one lexeme as it is (already normalised: no second stemming). */
export const quoteLexeme = (lexeme: string): string => `'${lexeme.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;

/** Which lexemes to search for and how, or null when none occurs in scope. */
export function chooseTerms(stats: readonly TermStat[], n: number, opts: Readonly<TermOptions> = TERM_OPTIONS): TermChoice | null {
  // the question's own lexemes first; a follow-up's carried ones fill what room is left
  const own = presentTerms(stats.filter((t) => !t.carried)).slice(0, opts.maxTerms);
  const ownSet = new Set(own.map((t) => t.lexeme));
  const carried = presentTerms(stats.filter((t) => t.carried && !ownSet.has(t.lexeme))).slice(0, Math.min(MAX_CARRIED, opts.maxTerms - own.length));
  const carriedSet = new Set(carried.map((t) => t.lexeme));
  const used = [...own, ...carried].sort(byDf);
  if (used.length === 0) return null;
  const rank = used.map((t) => t.lexeme);
  const idf = used.map((t) => bm25Idf(n, t.df) * (carriedSet.has(t.lexeme) ? CARRY_WEIGHT : 1));
  const idfOf = new Map(rank.map((l, i) => [l, idf[i]!]));
  const inOrder = own.filter((t) => t.pos !== undefined).sort((a, b) => a.pos! - b.pos!);
  const pairs: TermPair[] = [];
  for (let i = 1; i < inOrder.length; i++) {
    const a = inOrder[i - 1]!;
    const b = inOrder[i]!;
    pairs.push({ a: a.lexeme, b: b.lexeme, distance: b.pos! - a.pos!, idf: Math.min(idfOf.get(a.lexeme)!, idfOf.get(b.lexeme)!) });
  }
  const base = { rank, idf, carried: rank.map((l) => carriedSet.has(l)), pairs };
  const common = Math.max(opts.commonShare * n, opts.commonFloor);
  if (used[0]!.df > common) {
    const all = own.length > 0 ? own.map((t) => t.lexeme) : rank;
    return { ...base, steps: [{ kind: 'all', match: all.map(quoteLexeme).join(' & '), clauses: [all], excluded: [] }] };
  }
  let k = 0;
  for (let sum = 0; k < used.length && sum + used[k]!.df <= opts.budget; k++) sum += used[k]!.df;
  const single = used.slice(0, k).map((t) => [t.lexeme]);
  const rest = used.slice(k, k + opts.maxPaired);
  // Pairs of the commoner lexemes, by the rank of their commoner member: the rarest two, then
  // any two of the rarest three, … The rarer of a pair must not be very common.
  const pairsUpTo = (m: number) => {
    const out: string[][] = [];
    for (let j = 1; j < m; j++) for (let i = 0; i < j; i++) if (rest[i]!.df <= common) out.push([rest[i]!.lexeme, rest[j]!.lexeme]);
    return out;
  };
  const rarest = rest[0] && rest[0].df <= common ? [rest[0].lexeme] : null;
  const sets: Array<{ kind: Step['kind']; parts: string[][] }> = [];
  if (single.length === 0 && rest.length === 1) sets.push({ kind: 'rarest', parts: [rarest!] });
  else {
    let pairs = pairsUpTo(Math.min(2, rest.length));
    sets.push({ kind: pairs.length === 0 ? 'any' : 'rare or rarest pair', parts: [...single, ...pairs] });
    for (let m = 3; m <= rest.length; m++) {
      const wider = pairsUpTo(m);
      if (wider.length > pairs.length) sets.push({ kind: 'any pair', parts: [...single, ...wider] });
      pairs = wider;
    }
    if (rarest && rest.length > 0) sets.push({ kind: 'rarest', parts: [...single, rarest] });
  }
  const literal = (parts: string[][]) => parts.map((p) => (p.length === 1 ? quoteLexeme(p[0]!) : `( ${p.map(quoteLexeme).join(' & ')} )`)).join(' | ');
  const steps: Step[] = [];
  let before: string[][] = [];
  for (const set of sets) {
    const match = literal(set.parts);
    steps.push({ kind: set.kind, match: before.length > 0 ? `( ${match} ) & !( ${literal(before)} )` : match, clauses: set.parts, excluded: before });
    before = set.parts;
  }
  return { ...base, steps };
}
