/**
 * The lexical ranking's constants: the scorer's (score.ts), the features' (NEAR: search-sql.ts and
 * the in-memory index, lexical-index/), and the term statistics' prefix matching.
 */

/** BM25's term-frequency saturation and chunk-length normalisation (the usual values). */
export const BM25 = Object.freeze({ k1: 1.2, b: 0.75 });
/**
 * Boosts, in units of a lexeme's idf: found in the chunk's section headings (a field of its own,
 * weight A of plus_chunks.search); two neighbouring lexemes of the question found as the same
 * phrase (same distance apart) or near each other (either order, at most NEAR positions apart).
 */
export const BOOSTS = Object.freeze({ heading: 0.6, phrase: 0.5, near: 0.25 });
export const NEAR = 3;
/**
 * Per-file normalisation: a chunk of a file longer than the scope's average file has its score
 * divided by 1 + FILE_PRIOR × (√(file tokens ÷ average file tokens) − 1), so that a long file
 * with generic vocabulary — whose many chunks each hold a few of any question's common words —
 * does not take the first places of questions about the other files. Files of average length or
 * shorter are left alone.
 */
export const FILE_PRIOR = 0.3;
/** Scores equal to this many decimals count as a tie (decided by diversity, then density, never by document order alone). */
export const TIE_DECIMALS = 9;

/**
 * A question lexeme that no chunk in scope holds, of at least this many letters, stands for the
 * scope's commonest lexeme that begins with all of it but its last letter: spelling variants and
 * derived forms the English stemmer keeps apart ("licence" → licenc, found as licens). Failing
 * that, for the longest lexeme of the scope it begins with, at most DERIVED_MAX_CUT letters
 * shorter and of at least STEM_MIN_CHARS: the agent nouns and adjectives the stemmer leaves whole
 * ("compressor" → compress, "printer" → print, "licensor" → licens). Shorter lexemes are left
 * alone (a prefix of four letters or fewer matches too much).
 */
export const PREFIX_MIN_CHARS = 6;
export const STEM_MIN_CHARS = 5;
export const DERIVED_MAX_CUT = 3;
