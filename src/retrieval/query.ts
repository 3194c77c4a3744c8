/**
 * Turn a natural-language question into a PostgreSQL tsquery source that ORs its words, so a
 * chunk matching some of the question's words (after English stemming and stop-word removal by
 * to_tsquery) is still found; ranking then prefers chunks matching more of them.
 */
const MAX_TERMS = 32;

export function orQuery(question: string): string | null {
  const words = question.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  const terms = [...new Set(words.filter((w) => w.length >= 2 && w.length <= 64))].slice(0, MAX_TERMS);
  return terms.length > 0 ? terms.join(' | ') : null;
}
