/**
 * Token-aware, structure-respecting chunking.
 *
 * 1. Blocks: the text is cut into paragraphs at blank lines, and at heading lines:
 *    Markdown ATX (`# Title`, outside ``` fences) and setext (`Title` + `===`/`---`),
 *    plus — for text extracted from PDF/DOCX/HTML/plain files — heading-like lines:
 *    numbered headings ("1.2. Version", "3. Definitions."), ALL-CAPS lines, and short
 *    title-like one-line paragraphs without closing punctuation.
 * 2. Units: each paragraph is split into sentences (abbreviation-aware; list items,
 *    table rows and `key: value` lines also start a new unit; paragraphs where lines
 *    are clearly separate records are split per line). Each unit's tokens are counted
 *    ONCE, on its normalised text. Only a unit larger than maxTokens is split further:
 *    by lines, then — last resort — at word boundaries (or anywhere, for a giant "word")
 *    with the cut verified by the tokenizer.
 * 3. Packing: units are packed greedily in order up to maxTokens, using the sum of unit
 *    counts (+1 per line break between units) as the estimate. When a chunk is full it is
 *    cut back to the last paragraph boundary if that keeps it ≥ 60% full.
 *    Sections: a heading either starts a chunk, or its whole section (up to the next
 *    heading of any level) fits in the current chunk; small sections therefore share
 *    chunks, large ones start a new chunk.
 *    Overlap: a chunk that continues the same section starts with the last sentences of
 *    the previous chunk, up to overlapTokens (and never the previous chunk's first unit);
 *    overlap always starts at a sentence/line boundary, never mid-sentence, so it is
 *    omitted when the previous chunk ends in one sentence longer than overlapTokens.
 *    No overlap across a heading boundary.
 * 4. Each chunk is the raw slice text.slice(start, end) (`text`), its normalised form
 *    (`processed`, assembled from the units' normalised texts) and the EXACT token count of
 *    `processed` (`tokenSize`), obtained from the unit counts plus a re-count of the few
 *    words around each unit boundary (see BoundaryCounter) rather than a second full
 *    tokenizer pass. If the estimate was optimistic the chunk is shrunk until the exact
 *    count fits, so no chunk ever exceeds maxTokens (no slack).
 *
 * Cost: about one tokenizer pass over the text in total (each unit is counted once).
 */
import { normaliseText } from './normalise.js';
import { countTokens } from './tokens.js';

export interface ChunkOptions {
  /** Maximum tokens (o200k_base) of a chunk's processed text. Default 400, minimum 16. */
  maxTokens?: number;
  /** Target overlap with the previous chunk, in tokens. Default 50; capped at maxTokens / 2. */
  overlapTokens?: number;
  /** Split at headings and keep sections together (default true). */
  headingAware?: boolean;
  /**
   * Recognise Markdown heading syntax (`# Title`, setext underlines) — default true.
   * ingestDocument turns it off for PDF text, where a line starting with "# " is more
   * likely a shell/config comment than a heading.
   */
  markdown?: boolean;
}

export interface Chunk {
  index: number;
  /** Raw slice of the extracted text (fileData). */
  text: string;
  /** Normalised text (fileDataProcessed). */
  processed: string;
  /** Exact o200k_base token count of `processed`. */
  tokenSize: number;
}

export const DEFAULT_MAX_TOKENS = 400;
export const DEFAULT_OVERLAP_TOKENS = 50;
const MIN_MAX_TOKENS = 16;
const MIN_FILL = 0.6;

// Boundary strength before a unit.
const SEP_WORD = 1;
const SEP_LINE = 2;
const SEP_SENTENCE = 3;
const SEP_PARAGRAPH = 4;
const SEP_SECTION = 5;

// ---------------------------------------------------------------------------
// Heading detection
// ---------------------------------------------------------------------------

const ATX = /^ {0,3}#{1,6}(?:[ \t]|$)/;
const FENCE = /^ {0,3}(`{3,}|~{3,})/;
const SETEXT = /^ {0,3}(?:=+|-+)[ \t]*$/;
const NUMBERED = /^(?:\d{1,3}(?:\.\d{1,3})*\.?|[IVXLC]{1,6}\.|§ ?\d+(?:\.\d+)*|(?:Chapter|Section|Article|Part|Appendix|APPENDIX|CHAPTER|SECTION|ARTICLE|PART)\s+[\dIVXLC]+[.:]?)\s+\S/;
const MULTI_LEVEL = /^\d{1,3}(?:\.\d{1,3})+\.?\s+\p{Lu}/u;
const SINGLE_LEVEL = /^\d{1,3}\.\s+\p{Lu}/u;
const HAS_LOWER = /\p{Ll}/u;
const UPPER_LETTERS = /\p{Lu}.*\p{Lu}.*\p{Lu}/u;
const TITLE_START = /^[\p{Lu}\p{N}]/u;
const TERMINAL = /[.!?,;:]["'”’)\]]*$/;
const NOT_TITLE = /\||:\/\/|: |[{}<>=]/;

function words(line: string): number {
  let n = 1;
  for (let i = 0; i < line.length; i++) if (line.charCodeAt(i) === 32) n++;
  return n;
}

/** A paragraph consisting of this one (trimmed) line looks like a heading. */
function isStandaloneHeading(line: string): boolean {
  if (line.length < 2 || line.length > 80 || NOT_TITLE.test(line)) return false;
  const w = words(line);
  if (NUMBERED.test(line)) return w <= 12 && !/[,;]$/.test(line);
  if (!HAS_LOWER.test(line) && UPPER_LETTERS.test(line)) return w <= 12;
  return w <= 8 && line.length <= 60 && TITLE_START.test(line) && !TERMINAL.test(line);
}

const LIST_ITEM = /^(?:\d{1,3}[.)]|[-*+•])\s/;

/**
 * A numbered heading line inside a paragraph (typical of PDF text, which has no blank
 * lines): "1.2. What is this spec?" or "3. Introduction" — but not items of a numbered list.
 */
function isInlineHeading(line: string, prevLine: string | undefined, nextLine: string | undefined): boolean {
  if (line.length > 80 || NOT_TITLE.test(line) || /[,;:]$/.test(line)) return false;
  const w = words(line);
  if (MULTI_LEVEL.test(line)) return w <= 12;
  if (!SINGLE_LEVEL.test(line) || w > 8) return false;
  if ((prevLine !== undefined && LIST_ITEM.test(prevLine)) || (nextLine !== undefined && LIST_ITEM.test(nextLine))) return false;
  return prevLine === undefined || /[.!?"”)\]]$/.test(prevLine) || (w <= 6 && !TERMINAL.test(line));
}

/** "2. Grant of Copyright License. Subject to..." — a paragraph opening with a run-in numbered title. */
const RUN_IN_HEADING = /^\d{1,3}(?:\.\d{1,3})*\.\s+\p{Lu}[^.!?\n]{0,60}\.\s/u;

// ---------------------------------------------------------------------------
// Blocks
// ---------------------------------------------------------------------------

interface Block {
  start: number;
  end: number;
  /** The block is a heading line. */
  heading: boolean;
  /** The block is a paragraph that opens a new section (run-in heading). */
  sectionStart: boolean;
}

const isSpace = (c: number): boolean =>
  c === 32 || c === 10 || c === 9 || c === 13 || c === 11 || c === 12 || c === 0xa0 || c === 0xfeff || c === 0x85 || c === 0x2028 || c === 0x2029;

function trimRange(text: string, s: number, e: number): [number, number] {
  while (s < e && isSpace(text.charCodeAt(s))) s++;
  while (e > s && isSpace(text.charCodeAt(e - 1))) e--;
  return [s, e];
}

function nextLineOf(text: string, nl: number): string | undefined {
  if (nl === -1) return undefined;
  const end = text.indexOf('\n', nl + 1);
  const [s, e] = trimRange(text, nl + 1, end === -1 ? text.length : end);
  return e > s ? text.slice(s, e) : undefined;
}

function splitBlocks(text: string, headingAware: boolean, markdown: boolean): Block[] {
  const blocks: Block[] = [];
  const len = text.length;
  let bStart = -1; // start of current block
  let bEnd = -1; // end of last line of current block
  let bLines = 0;
  let prevLine: string | undefined; // previous line of the current block
  let lastLine: string | undefined; // previous non-blank line, whatever block it was in
  let fence: string | null = null;

  const flush = (heading = false): void => {
    if (bStart >= 0) {
      const [s, e] = trimRange(text, bStart, bEnd);
      if (e > s) {
        let h = heading;
        let sectionStart = false;
        if (headingAware && !h) {
          const first = text.slice(s, Math.min(e, s + 200));
          if (bLines === 1 && fence === null) h = isStandaloneHeading(first);
          if (!h) sectionStart = RUN_IN_HEADING.test(first);
        }
        blocks.push({ start: s, end: e, heading: h, sectionStart });
      }
    }
    bStart = -1;
    bEnd = -1;
    bLines = 0;
    prevLine = undefined;
  };
  const extend = (pos: number, le: number, line: string): void => {
    if (bStart < 0) bStart = pos;
    bEnd = le;
    bLines++;
    prevLine = line;
  };

  let pos = 0;
  while (pos <= len) {
    const nl = text.indexOf('\n', pos);
    const lineEnd = nl === -1 ? len : nl;
    const [ls, le] = trimRange(text, pos, lineEnd);
    if (le === ls) {
      flush();
    } else {
      const line = text.slice(ls, le);
      const rawLine = text.slice(pos, lineEnd);
      const fenceMatch = FENCE.exec(rawLine);
      if (fence !== null) {
        if (fenceMatch && fenceMatch[1]!.startsWith(fence)) fence = null;
        extend(pos, le, line);
      } else if (fenceMatch) {
        fence = fenceMatch[1]!.slice(0, 3);
        extend(pos, le, line);
      } else if (headingAware && markdown && ATX.test(rawLine)) {
        flush();
        blocks.push({ start: ls, end: le, heading: true, sectionStart: false });
      } else if (headingAware && markdown && bLines === 1 && SETEXT.test(rawLine) && prevLine !== undefined && !SETEXT.test(prevLine)) {
        bEnd = le;
        flush(true);
      } else if (headingAware && isInlineHeading(line, lastLine, nextLineOf(text, nl))) {
        flush();
        blocks.push({ start: ls, end: le, heading: true, sectionStart: false });
      } else {
        extend(pos, le, line);
      }
      lastLine = line;
    }
    if (nl === -1) break;
    pos = nl + 1;
  }
  flush();
  return blocks;
}

// ---------------------------------------------------------------------------
// Sentences
// ---------------------------------------------------------------------------

const SENTENCE_END = /[.!?…]+["'”’»)\]]*\s+|[。！？]+["'”’」』)\]]*\s*/g;
const WORD_BEFORE = /(?:^|[\s(["'])([A-Za-z][A-Za-z.]{0,9})$/;
const ABBREVIATIONS = new Set(
  'mr mrs ms dr prof sr jr st vs etc e.g i.e eg ie cf al inc ltd co corp no nos fig figs vol vols pp p sec art ch approx resp dept est jan feb mar apr jun jul aug sep sept oct nov dec mt ft op ed eds rev gen col'.split(' '),
);
const LOWER_START = /^\p{Ll}/u;
const ITEM_START = /^(?:[-*+•‣◦▪–]\s|\d{1,3}[.)]\s|\([a-z0-9]{1,3}\)\s|>|\||[\w$.[\]"-]{1,60}:\s)/;
const SOFT_PREV = /[\p{L}\p{N},-]$/u;

/** Start offsets (relative to `s`) of sentences inside text[s, e), excluding 0. */
function sentenceStarts(block: string): number[] {
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
function lineStarts(block: string): number[] {
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
function isLineStructured(block: string, starts: number[]): boolean {
  if (starts.length < 2) return false;
  let soft = 0;
  for (const st of starts) {
    let p = st - 1;
    while (p > 0 && isSpace(block.charCodeAt(p))) p--;
    if (SOFT_PREV.test(block.charAt(p)) && LOWER_START.test(block.charAt(st)) && !ITEM_START.test(block.slice(st, st + 62))) soft++;
  }
  return soft / starts.length < 0.1;
}

// ---------------------------------------------------------------------------
// Units
// ---------------------------------------------------------------------------

class Units {
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

function addParagraph(units: Units, text: string, s: number, e: number, sep: number): void {
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

/**
 * normaliseText(text.slice(start[from], end[to - 1])), assembled from the units' normalised
 * texts and their glue instead of re-normalising the slice (saves a pass over the text).
 * Returns undefined when units touch and the second starts with a non-ASCII character
 * (NFC could compose across the cut); the caller then normalises the slice itself.
 */
function joinUnits(units: Units, from: number, to: number): string | undefined {
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
class BoundaryCounter {
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

// ---------------------------------------------------------------------------
// Packing
// ---------------------------------------------------------------------------

function resolveOptions(opts: ChunkOptions | undefined): Required<ChunkOptions> {
  const maxTokens = opts?.maxTokens ?? DEFAULT_MAX_TOKENS;
  if (!Number.isInteger(maxTokens) || maxTokens < MIN_MAX_TOKENS) {
    throw new RangeError(`maxTokens must be an integer ≥ ${MIN_MAX_TOKENS} (got ${maxTokens})`);
  }
  const overlap = opts?.overlapTokens ?? DEFAULT_OVERLAP_TOKENS;
  if (!Number.isFinite(overlap) || overlap < 0) {
    throw new RangeError(`overlapTokens must be ≥ 0 (got ${overlap})`);
  }
  return {
    maxTokens,
    overlapTokens: Math.min(Math.floor(overlap), Math.floor(maxTokens / 2)),
    headingAware: opts?.headingAware ?? true,
    markdown: opts?.markdown ?? true,
  };
}

export function chunkText(text: string, opts?: ChunkOptions): Chunk[] {
  const { maxTokens: max, overlapTokens: overlap, headingAware, markdown } = resolveOptions(opts);
  const units = new Units(text, max);
  for (const b of splitBlocks(text, headingAware, markdown)) {
    if (b.heading) units.add(b.start, b.end, SEP_SECTION, true);
    else addParagraph(units, text, b.start, b.end, b.sectionStart ? SEP_SECTION : SEP_PARAGRAPH);
  }

  const { start, end: uEnd, tok, sep, cost, section, sectionTokens, sectionUnits, heading } = units;
  const n = units.length;
  // A section holding only its heading (e.g. "## API" directly followed by "### Method")
  // is kept with the section(s) that follow it, so a chunk never ends with a bare heading.
  const firstUnitOf: number[] = [];
  for (let i = n - 1; i >= 0; i--) firstUnitOf[section[i]!] = i;
  const headingOnly = (sec: number): boolean => sectionUnits[sec] === 1 && heading[firstUnitOf[sec]!] === true;
  const fitTokens: number[] = new Array<number>(sectionTokens.length);
  for (let sec = sectionTokens.length - 1; sec >= 0; sec--) {
    fitTokens[sec] = sectionTokens[sec]! + (headingOnly(sec) && sec + 1 < sectionTokens.length ? 1 + fitTokens[sec + 1]! : 0);
  }
  const chunks: Chunk[] = [];
  const counter = new BoundaryCounter(units);
  const fill: number[] = new Array<number>(n + 1);
  let pos = 0;
  let prevFirst = -1;
  let prevEnd = -1;

  while (pos < n) {
    const first = pos;

    // Overlap: trailing sentences of the previous chunk, same section, ≤ budget.
    let ovStart = -1;
    let ovTokens = 0;
    if (overlap > 0 && prevEnd === first && sep[first]! < SEP_SECTION) {
      const budget = Math.min(overlap, max - tok[first]! - cost[first]!);
      let sum = 0;
      for (let k = first - 1; k > prevFirst; k--) {
        sum += tok[k]! + cost[k + 1]!;
        if (sum > budget) break;
        if (sep[k]! >= SEP_SENTENCE) {
          ovStart = k;
          ovTokens = sum;
        }
        if (sep[k] === SEP_SECTION) break;
      }
    }

    // Greedy fill.
    let tokens = ovTokens;
    let end = first;
    let budgetStop = false;
    let onlyHeadings = true; // nothing but heading lines so far: keep going into the next section
    while (end < n) {
      const c = end > first || ovStart >= 0 ? cost[end]! : 0;
      if (end > first && sep[end] === SEP_SECTION && !onlyHeadings && tokens + c + fitTokens[section[end]!]! > max) break;
      if (tokens + c + tok[end]! > max) {
        if (end > first) {
          budgetStop = true;
          break;
        }
        if (ovStart >= 0) {
          // The overlap left no room for the first unit: drop it.
          ovStart = -1;
          tokens = 0;
          continue;
        }
        // (A single unit never exceeds max; fall through defensively.)
      }
      fill[end] = tokens;
      tokens += c + tok[end]!;
      if (!heading[end]) onlyHeadings = false;
      end++;
    }

    // Prefer ending at a paragraph boundary when that keeps the chunk reasonably full.
    if (budgetStop && sep[end]! < SEP_PARAGRAPH) {
      const minFill = max * MIN_FILL;
      for (let j = end - 1; j > first; j--) {
        if (fill[j]! < minFill) break;
        if (sep[j]! >= SEP_PARAGRAPH) {
          end = j;
          break;
        }
      }
    }

    // Exact count; shrink if the estimate was optimistic.
    let from = ovStart >= 0 ? ovStart : first;
    const exactCount = (): [string, number] => {
      const joined = joinUnits(units, from, end);
      if (joined !== undefined) return [joined, counter.count(from, end)];
      const p = normaliseText(text.slice(start[from]!, uEnd[end - 1]!));
      return [p, countTokens(p)];
    };
    let [processed, exact] = exactCount();
    while (exact > max) {
      let h = -1;
      for (let k = end - 1; k > first; k--) {
        if (sep[k] === SEP_SECTION) {
          h = k;
          break;
        }
      }
      while (h - 1 > first && sep[h - 1] === SEP_SECTION && headingOnly(section[h - 1]!)) h--;
      if (h > first) end = h;
      else if (end - first > 1) end--;
      else if (from < first) from = first;
      else break;
      [processed, exact] = exactCount();
    }
    const raw = text.slice(start[from]!, uEnd[end - 1]!);

    chunks.push({ index: chunks.length, text: raw, processed, tokenSize: exact });
    prevFirst = first;
    prevEnd = end;
    pos = end;
  }
  return chunks;
}
