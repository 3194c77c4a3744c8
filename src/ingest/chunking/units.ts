/**
 * Stage 2 of chunking: units — sentences, list items, records, heading lines — each with its
 * token count (counted once, on its normalised text), the strength of the boundary before it
 * and its section. A unit larger than maxTokens is split by lines, then at word boundaries
 * (or anywhere, for a giant "word") with the cut verified by the tokenizer.
 */
import { normaliseText } from '../normalise.js';
import { countTokens } from '../tokens.js';
import { ITEM_START, isLineStructured, lineStarts, sentenceStarts } from './sentences.js';
import { isSpace, trimRange } from './text-ranges.js';

// Boundary strength before a unit.
export const SEP_WORD = 1;
export const SEP_LINE = 2;
export const SEP_SENTENCE = 3;
export const SEP_PARAGRAPH = 4;
export const SEP_SECTION = 5;

export class Units {
  start: number[] = [];
  end: number[] = [];
  tok: number[] = [];
  sep: number[] = [];
  /** Estimated cost (tokens) of the separator before the unit: 1 if it contains a line break. */
  cost: number[] = [];
  section: number[] = [];
  sectionTokens: number[] = [];
  /** Number of units in each section. */
  sectionUnits: number[] = [];
  /** The unit is (the first piece of) a heading line. */
  heading: boolean[] = [];
  /** Normalised text of the unit. */
  norm: string[] = [];
  /** What normaliseText turns the gap before the unit into: '', ' ', '\n' or '\n\n'. */
  glue: string[] = [];
  private pendingSep = 0;
  private currentSection = -1;

  constructor(
    private readonly text: string,
    private readonly maxTokens: number,
  ) {}

  get length(): number {
    return this.start.length;
  }

  /** Add text[s, e) as one or more units (split further if over maxTokens). */
  add(s: number, e: number, sep: number, isHeading = false): void {
    [s, e] = trimRange(this.text, s, e);
    if (e <= s) {
      this.pendingSep = Math.max(this.pendingSep, sep);
      return;
    }
    const norm = normaliseText(this.text.slice(s, e));
    const tok = countTokens(norm);
    if (tok === 0) {
      this.pendingSep = Math.max(this.pendingSep, sep);
      return;
    }
    if (tok > this.maxTokens) {
      this.splitOversize(s, e, sep, tok);
      return;
    }
    this.push(s, e, sep, tok, norm, isHeading);
  }

  private push(s: number, e: number, sep: number, tok: number, norm: string, isHeading = false): void {
    const n = this.start.length;
    sep = n === 0 ? SEP_SECTION : Math.max(sep, this.pendingSep);
    this.pendingSep = 0;
    if (sep === SEP_SECTION) {
      this.currentSection++;
      this.sectionTokens.push(0);
      this.sectionUnits.push(0);
    }
    // The gap before the unit is whitespace (plus any skipped token-less text); normaliseText
    // maps it to one blank line, one line break, one space or nothing.
    let breaks = 0;
    let glue = '';
    if (n > 0) {
      const text = this.text;
      for (let i = this.end[n - 1]!; i < s && breaks < 2; i++) {
        const c = text.charCodeAt(i);
        if (c === 10 || c === 0x85 || c === 0x2028) breaks++;
        else if (c === 13) {
          breaks++;
          if (text.charCodeAt(i + 1) === 10) i++;
        } else if (c === 0x2029) breaks += 2;
        else if (isSpace(c)) glue = ' ';
      }
      if (breaks > 0) glue = breaks >= 2 ? '\n\n' : '\n';
    }
    // 1 token for a line break between units ("\n" / "\n\n" are single tokens).
    const cost = breaks > 0 ? 1 : 0;
    const sec = this.currentSection;
    this.start.push(s);
    this.end.push(e);
    this.tok.push(tok);
    this.sep.push(sep);
    this.cost.push(cost);
    this.section.push(sec);
    this.heading.push(isHeading);
    this.norm.push(norm);
    this.glue.push(glue);
    this.sectionUnits[sec] = this.sectionUnits[sec]! + 1;
    this.sectionTokens[sec] = this.sectionTokens[sec]! + tok + (sep === SEP_SECTION ? 0 : cost);
  }

  private splitOversize(s: number, e: number, sep: number, tok: number): void {
    const piece = this.text.slice(s, e);
    const ls = lineStarts(piece);
    if (ls.length > 0) {
      let prev = 0;
      for (const st of ls) {
        this.add(s + prev, s + st, prev === 0 ? sep : SEP_LINE);
        prev = st;
      }
      this.add(s + prev, e, ls.length > 0 ? SEP_LINE : sep);
      return;
    }
    this.splitWords(s, e, sep, tok);
  }

  /** Last resort: cut a single over-long line into pieces of ≤ maxTokens, verified by the tokenizer. */
  private splitWords(s: number, e: number, sep: number, tok: number): void {
    const text = this.text;
    const limit = this.maxTokens;
    let first = true;
    let charsPerToken = (e - s) / tok;
    while (s < e) {
      let cut: number;
      let norm = '';
      let count: number;
      if (first) {
        cut = e;
        count = tok;
      } else {
        cut = Math.min(e, s + Math.max(1, Math.floor(limit * charsPerToken * 0.95)));
        if (cut < e) cut = this.snap(s, cut);
        norm = normaliseText(text.slice(s, cut));
        count = countTokens(norm);
      }
      while (count > limit) {
        let c = s + Math.max(1, Math.floor((cut - s) * (limit / count) * 0.95));
        if (c >= cut) c = cut - 1;
        c = this.snap(s, c);
        cut = c;
        norm = normaliseText(text.slice(s, cut));
        count = countTokens(norm);
      }
      if (count > 0) {
        if (norm === '') norm = normaliseText(text.slice(s, cut));
        const [ts, te] = trimRange(text, s, cut);
        this.push(ts, te, first ? sep : SEP_WORD, count, norm);
        first = false;
        charsPerToken = Math.max(0.25, (cut - s) / count);
      }
      s = cut;
      while (s < e && isSpace(text.charCodeAt(s))) s++;
    }
  }

  /** Move a cut position back to just after whitespace (within the second half of the window); never split a surrogate pair. */
  private snap(s: number, c: number): number {
    const text = this.text;
    const ws = lastSpace(text, s + Math.floor((c - s) / 2), c);
    if (ws > s) c = ws;
    const code = text.charCodeAt(c - 1);
    if (code >= 0xd800 && code <= 0xdbff && c - 1 > s) c--;
    return c <= s ? s + 1 : c;
  }
}

function lastSpace(text: string, from: number, to: number): number {
  for (let i = to; i > from; i--) {
    if (isSpace(text.charCodeAt(i - 1))) return i;
  }
  return -1;
}

export function addParagraph(units: Units, text: string, s: number, e: number, sep: number): void {
  const block = text.slice(s, e);
  const lines = lineStarts(block);
  // Segment starts (relative, excluding 0) and the boundary strength before each.
  const segments: number[] = [];
  const segSeps: number[] = [];
  if (lines.length > 0) {
    const structured = isLineStructured(block, lines);
    for (const st of lines) {
      const item = ITEM_START.test(block.slice(st, st + 62));
      if (item || structured) {
        segments.push(st);
        // A list item / record is a natural starting point; a bare line (e.g. code) is weaker.
        segSeps.push(item ? SEP_SENTENCE : SEP_LINE);
      }
    }
  }
  const emit = (a: number, b: number, segSep: number): void => {
    const seg = block.slice(a, b);
    const starts = sentenceStarts(seg);
    let p = 0;
    for (const st of starts) {
      units.add(s + a + p, s + a + st, p === 0 ? segSep : SEP_SENTENCE);
      p = st;
    }
    units.add(s + a + p, s + b, p === 0 ? segSep : SEP_SENTENCE);
  };
  let prev = 0;
  let prevSep = sep;
  for (let i = 0; i < segments.length; i++) {
    emit(prev, segments[i]!, prevSep);
    prev = segments[i]!;
    prevSep = segSeps[i]!;
  }
  emit(prev, block.length, prevSep);
}
