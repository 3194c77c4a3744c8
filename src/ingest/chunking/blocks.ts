/**
 * Stage 1 of chunking: the text cut into blocks — paragraphs at blank lines, heading lines on
 * their own (headings.ts), fenced code kept whole.
 */
import { ATX, FENCE, isInlineHeading, isStandaloneHeading, RUN_IN_HEADING, SETEXT } from './headings.js';
import { trimRange } from './text-ranges.js';

export interface Block {
  start: number;
  end: number;
  /** The block is a heading line. */
  heading: boolean;
  /** The block is a paragraph that opens a new section (run-in heading). */
  sectionStart: boolean;
}

function nextLineOf(text: string, nl: number): string | undefined {
  if (nl === -1) return undefined;
  const end = text.indexOf('\n', nl + 1);
  const [s, e] = trimRange(text, nl + 1, end === -1 ? text.length : end);
  return e > s ? text.slice(s, e) : undefined;
}

export function splitBlocks(text: string, headingAware: boolean, markdown: boolean): Block[] {
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
