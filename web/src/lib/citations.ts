/** The `[n]` markers with which an answer cites the numbered passages of its context (no DOM here: tested in node). */

/** `[3]`, `[10]`, `[1, 4]` or `[2,5,7]`: one or more numbers in square brackets. */
export const CITATION = /\[(\d{1,3}(?:\s*,\s*\d{1,3})*)\]/g;

/** The source numbers an answer cites (1-based, each once, in order of appearance). */
export function citedNumbers(text: string, count: number): number[] {
  const out: number[] = [];
  for (const m of text.matchAll(CITATION)) {
    for (const part of m[1]!.split(',')) {
      const n = Number(part.trim());
      if (n >= 1 && n <= count && !out.includes(n)) out.push(n);
    }
  }
  return out;
}
