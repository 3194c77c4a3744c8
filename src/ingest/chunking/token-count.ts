/**
 * A chunk's normalised text and exact token count, assembled from its units instead of
 * re-normalising and re-tokenising the whole chunk.
 */
import { countTokens } from '../tokens.js';
import type { Units } from './units.js';

/**
 * normaliseText(text.slice(start[from], end[to - 1])), assembled from the units' normalised
 * texts and their glue instead of re-normalising the slice (saves a pass over the text).
 * Returns undefined when units touch and the second starts with a non-ASCII character
 * (NFC could compose across the cut); the caller then normalises the slice itself.
 */
export function joinUnits(units: Units, from: number, to: number): string | undefined {
  const { norm, glue } = units;
  let out = norm[from]!;
  for (let k = from + 1; k < to; k++) {
    const g = glue[k]!;
    if (g === '' && norm[k]!.charCodeAt(0) > 0x7f) return undefined;
    out += g + norm[k]!;
  }
  return out;
}

/*
 * Exact token count of a joined chunk without re-tokenising it.
 *
 * The o200k_base pre-tokenizer (the regex that splits text before BPE, and BPE never merges
 * across its pieces) always starts a new piece at a space that follows a non-whitespace
 * character: no pattern can contain such a space except as its first character. Call those
 * positions sync points. Because the pattern has no look-behind and its only look-ahead
 * ((?!\S) after whitespace) cannot see past a non-whitespace character, the pieces between two
 * sync points are the same whether the text is tokenised whole or in those segments. Hence
 * count(a + " " + b) = count(a) + count(" " + b) when a ends with non-whitespace, and in
 * general a text's count is the sum of the counts of its sync-point segments.
 *
 * So a chunk's count is the sum of its units' counts, corrected only where segments cross unit
 * boundaries: the last segment of one unit, the glue ("\n", "\n\n", or " " which is itself a
 * sync point) and the first segment of the next unit are re-counted together — a few words per
 * boundary instead of the whole chunk. Tests check tokenSize === countTokens(processed).
 */
export class BoundaryCounter {
  private readonly headEnd: number[] = [];
  private readonly tailStart: number[] = [];
  private readonly memo = new Map<string, number>();

  constructor(private readonly units: Units) {}

  private small(s: string): number {
    if (s.length > 64) return countTokens(s);
    let c = this.memo.get(s);
    if (c === undefined) {
      c = countTokens(s);
      if (this.memo.size > 50_000) this.memo.clear();
      this.memo.set(s, c);
    }
    return c;
  }

  /** First and last sync point of unit k (-1 when it has none). */
  private syncs(k: number): void {
    if (this.headEnd[k] !== undefined) return;
    const t = this.units.norm[k]!;
    let first = -1;
    let last = -1;
    for (let i = t.indexOf(' ', 1); i !== -1; i = t.indexOf(' ', i + 1)) {
      const prev = t.charCodeAt(i - 1);
      if (prev !== 32 && prev !== 10) {
        if (first === -1) first = i;
        last = i;
      }
    }
    this.headEnd[k] = first;
    this.tailStart[k] = last;
  }

  count(from: number, to: number): number {
    const { norm, glue, tok } = this.units;
    let total = 0;
    let open = '';
    for (let k = from; k < to; k++) {
      this.syncs(k);
      const t = norm[k]!;
      const h = this.headEnd[k]!;
      const g = k === from ? '' : glue[k]!;
      if (g === ' ') {
        total += this.small(open);
        open = ' ';
      } else {
        open += g;
      }
      if (h === -1) {
        open += t;
        continue;
      }
      const ts = this.tailStart[k]!;
      const head = t.slice(0, h);
      const tail = t.slice(ts);
      total += (k === from ? this.small(head) : this.small(open + head)) + tok[k]! - this.small(head) - this.small(tail);
      open = tail;
    }
    return total + this.small(open);
  }
}
