/**
 * Where units may start inside a paragraph: sentence starts (abbreviation-aware), line starts,
 * and whether a paragraph's lines are separate records rather than soft-wrapped prose.
 */
import { isSpace } from './text-ranges.js';

const SENTENCE_END = /[.!?…]+["'”’»)\]]*\s+|[。！？]+["'”’」』)\]]*\s*/g;
const WORD_BEFORE = /(?:^|[\s(["'])([A-Za-z][A-Za-z.]{0,9})$/;
const ABBREVIATIONS = new Set(
  'mr mrs ms dr prof sr jr st vs etc e.g i.e eg ie cf al inc ltd co corp no nos fig figs vol vols pp p sec art ch approx resp dept est jan feb mar apr jun jul aug sep sept oct nov dec mt ft op ed eds rev gen col'.split(
    ' ',
  ),
);
const LOWER_START = /^\p{Ll}/u;
export const ITEM_START = /^(?:[-*+•‣◦▪–]\s|\d{1,3}[.)]\s|\([a-z0-9]{1,3}\)\s|>|\||[\w$.[\]"-]{1,60}:\s)/;
const SOFT_PREV = /[\p{L}\p{N},-]$/u;

/** Start offsets (relative to `s`) of sentences inside text[s, e), excluding 0. */
export function sentenceStarts(block: string): number[] {
  const starts: number[] = [];
  SENTENCE_END.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = SENTENCE_END.exec(block)) !== null) {
    const next = m.index + m[0].length;
    if (next >= block.length) break;
    if (m[0].length === 0) {
      SENTENCE_END.lastIndex++;
      continue;
    }
    if (LOWER_START.test(block.charAt(next))) continue;
    if (block.charCodeAt(m.index) === 46 /* . */ && (m[0].length < 2 || block.charCodeAt(m.index + 1) !== 46)) {
      const w = WORD_BEFORE.exec(block.slice(Math.max(0, m.index - 11), m.index));
      if (w) {
        const word = w[1]!.toLowerCase();
        if (word.length === 1 || ABBREVIATIONS.has(word) || word.includes('.')) continue;
      }
    }
    starts.push(next);
  }
  return starts;
}

/** Offsets (relative) where lines start inside the block, excluding 0. */
export function lineStarts(block: string): number[] {
  const out: number[] = [];
  let i = block.indexOf('\n');
  while (i !== -1) {
    let j = i + 1;
    while (j < block.length && (block.charCodeAt(j) === 32 || block.charCodeAt(j) === 9 || block.charCodeAt(j) === 13)) j++;
    if (j < block.length) out.push(j);
    i = block.indexOf('\n', j);
  }
  return out;
}

/** Lines that are clearly separate records (few soft-wrapped prose line breaks). */
export function isLineStructured(block: string, starts: number[]): boolean {
  if (starts.length < 2) return false;
  let soft = 0;
  for (const st of starts) {
    let p = st - 1;
    while (p > 0 && isSpace(block.charCodeAt(p))) p--;
    if (SOFT_PREV.test(block.charAt(p)) && LOWER_START.test(block.charAt(st)) && !ITEM_START.test(block.slice(st, st + 62))) soft++;
  }
  return soft / starts.length < 0.1;
}
