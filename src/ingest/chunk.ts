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
 *
 * Files: chunking/headings.ts + blocks.ts (1), sentences.ts + units.ts (2), this file (3),
 * chunking/token-count.ts (4). chunkText runs the steps as named functions: unitsOf (1–2),
 * sectionFits, overlapBefore, fillChunk, endAtParagraph (3), fitExactly (4).
 */
import { normaliseText } from './normalise.js';
import { countTokens } from './tokens.js';
import { splitBlocks } from './chunking/blocks.js';
import { BoundaryCounter, joinUnits } from './chunking/token-count.js';
import { chunkHeading } from './chunking/section-headings.js';
import { addParagraph, SEP_PARAGRAPH, SEP_SECTION, SEP_SENTENCE, Units } from './chunking/units.js';

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
  /** The section headings that govern the chunk (chunking/section-headings.ts), or null. */
  heading: string | null;
}

export const DEFAULT_MAX_TOKENS = 400;
export const DEFAULT_OVERLAP_TOKENS = 50;
const MIN_MAX_TOKENS = 16;
const MIN_FILL = 0.6;

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

/** Steps 1–2: the text's blocks (paragraphs, headings) cut into units, each counted once. */
function unitsOf(text: string, max: number, headingAware: boolean, markdown: boolean): Units {
  const units = new Units(text, max);
  for (const b of splitBlocks(text, headingAware, markdown)) {
    if (b.heading) units.add(b.start, b.end, SEP_SECTION, true);
    else addParagraph(units, text, b.start, b.end, b.sectionStart ? SEP_SECTION : SEP_PARAGRAPH);
  }
  return units;
}

/** Per section: whether it holds only its heading, and the tokens it needs to fit in a chunk. */
interface SectionFit {
  headingOnly: (sec: number) => boolean;
  fitTokens: number[];
}

/**
 * A section holding only its heading (e.g. "## API" directly followed by "### Method") is kept
 * with the section(s) that follow it, so a chunk never ends with a bare heading: its fit counts
 * theirs too.
 */
function sectionFits(units: Units): SectionFit {
  const { section, sectionTokens, sectionUnits, heading } = units;
  const firstUnitOf: number[] = [];
  for (let i = units.length - 1; i >= 0; i--) firstUnitOf[section[i]!] = i;
  const headingOnly = (sec: number): boolean => sectionUnits[sec] === 1 && heading[firstUnitOf[sec]!] === true;
  const fitTokens: number[] = new Array<number>(sectionTokens.length);
  for (let sec = sectionTokens.length - 1; sec >= 0; sec--) {
    fitTokens[sec] = sectionTokens[sec]! + (headingOnly(sec) && sec + 1 < sectionTokens.length ? 1 + fitTokens[sec + 1]! : 0);
  }
  return { headingOnly, fitTokens };
}

/** Where a chunk's overlap starts (-1: none) and its tokens. */
interface Overlap {
  start: number;
  tokens: number;
}

/**
 * Overlap: the trailing sentences of the previous chunk (units prevFirst..first, when it ended
 * where this one starts), same section, within the overlap budget.
 */
function overlapBefore(units: Units, first: number, prevFirst: number, prevEnd: number, overlap: number, max: number): Overlap {
  const { tok, sep, cost } = units;
  const ov: Overlap = { start: -1, tokens: 0 };
  if (overlap > 0 && prevEnd === first && sep[first]! < SEP_SECTION) {
    const budget = Math.min(overlap, max - tok[first]! - cost[first]!);
    let sum = 0;
    for (let k = first - 1; k > prevFirst; k--) {
      sum += tok[k]! + cost[k + 1]!;
      if (sum > budget) break;
      if (sep[k]! >= SEP_SENTENCE) {
        ov.start = k;
        ov.tokens = sum;
      }
      if (sep[k] === SEP_SECTION) break;
    }
  }
  return ov;
}

/**
 * Greedy fill from unit `first` (after the overlap, which is dropped when it leaves no room for
 * the first unit) up to max tokens; a section starts a chunk unless it fits whole. `fill[j]`
 * gets the tokens before unit j. Returns the end (exclusive) and whether the budget stopped it.
 */
function fillChunk(units: Units, first: number, ov: Overlap, max: number, fitTokens: number[], fill: number[]): { end: number; budgetStop: boolean } {
  const { tok, sep, cost, section, heading } = units;
  const n = units.length;
  let tokens = ov.tokens;
  let end = first;
  let onlyHeadings = true; // nothing but heading lines so far: keep going into the next section
  while (end < n) {
    const c = end > first || ov.start >= 0 ? cost[end]! : 0;
    if (end > first && sep[end] === SEP_SECTION && !onlyHeadings && tokens + c + fitTokens[section[end]!]! > max) break;
    if (tokens + c + tok[end]! > max) {
      if (end > first) return { end, budgetStop: true };
      if (ov.start >= 0) {
        // The overlap left no room for the first unit: drop it.
        ov.start = -1;
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
  return { end, budgetStop: false };
}

/** A chunk the budget stopped ends at its last paragraph boundary when that keeps it ≥ MIN_FILL full. */
function endAtParagraph(units: Units, first: number, end: number, max: number, fill: number[]): number {
  const { sep } = units;
  if (sep[end]! >= SEP_PARAGRAPH) return end;
  const minFill = max * MIN_FILL;
  for (let j = end - 1; j > first; j--) {
    if (fill[j]! < minFill) break;
    if (sep[j]! >= SEP_PARAGRAPH) return j;
  }
  return end;
}

/**
 * Step 4: the chunk's processed text and exact token count; while that is over max, it is cut
 * back (to the last section start, else by a unit, else without its overlap).
 */
function fitExactly(
  units: Units,
  counter: BoundaryCounter,
  text: string,
  first: number,
  range: { from: number; end: number },
  max: number,
  headingOnly: (sec: number) => boolean,
): { processed: string; exact: number } {
  const { start, end: uEnd, sep, section } = units;
  let { from, end } = range;
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
  range.from = from;
  range.end = end;
  return { processed, exact };
}

export function chunkText(text: string, opts?: ChunkOptions): Chunk[] {
  const { maxTokens: max, overlapTokens: overlap, headingAware, markdown } = resolveOptions(opts);
  const units = unitsOf(text, max, headingAware, markdown);
  const { headingOnly, fitTokens } = sectionFits(units);
  const chunks: Chunk[] = [];
  const counter = new BoundaryCounter(units);
  const fill: number[] = new Array<number>(units.length + 1);
  let prevFirst = -1;
  let prevEnd = -1;
  for (let first = 0; first < units.length;) {
    const ov = overlapBefore(units, first, prevFirst, prevEnd, overlap, max);
    const filled = fillChunk(units, first, ov, max, fitTokens, fill);
    const end = filled.budgetStop ? endAtParagraph(units, first, filled.end, max, fill) : filled.end;
    const range = { from: ov.start >= 0 ? ov.start : first, end };
    const { processed, exact } = fitExactly(units, counter, text, first, range, max, headingOnly);
    const raw = text.slice(units.start[range.from]!, units.end[range.end - 1]!);
    chunks.push({ index: chunks.length, text: raw, processed, tokenSize: exact, heading: chunkHeading(units, range.from, range.end) });
    prevFirst = first;
    prevEnd = range.end;
    first = range.end;
  }
  return chunks;
}
