/**
 * Heading detection: Markdown ATX (`# Title`, outside ``` fences) and setext (`Title` + `===`/`---`)
 * syntax, and — for text extracted from PDF/DOCX/HTML/plain files — heading-like lines: numbered
 * headings ("1.2. Version", "3. Definitions."), ALL-CAPS lines, and short title-like one-line
 * paragraphs without closing punctuation.
 */

export const ATX = /^ {0,3}#{1,6}(?:[ \t]|$)/;
export const FENCE = /^ {0,3}(`{3,}|~{3,})/;
export const SETEXT = /^ {0,3}(?:=+|-+)[ \t]*$/;
const NUMBERED =
  /^(?:\d{1,3}(?:\.\d{1,3})*\.?|[IVXLC]{1,6}\.|§ ?\d+(?:\.\d+)*|(?:Chapter|Section|Article|Part|Appendix|APPENDIX|CHAPTER|SECTION|ARTICLE|PART)\s+[\dIVXLC]+[.:]?)\s+\S/;
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
export function isStandaloneHeading(line: string): boolean {
  if (line.length < 2 || line.length > 80 || NOT_TITLE.test(line)) return false;
  const w = words(line);
  if (NUMBERED.test(line)) return w <= 12 && !/[,;]$/.test(line);
  if (!HAS_LOWER.test(line) && UPPER_LETTERS.test(line)) return w <= 12;
  return w <= 8 && line.length <= 60 && TITLE_START.test(line) && !TERMINAL.test(line);
}

export const LIST_ITEM = /^(?:\d{1,3}[.)]|[-*+•])\s/;

/**
 * A numbered heading line inside a paragraph (typical of PDF text, which has no blank
 * lines): "1.2. What is this spec?" or "3. Introduction" — but not items of a numbered list.
 */
export function isInlineHeading(line: string, prevLine: string | undefined, nextLine: string | undefined): boolean {
  if (line.length > 80 || NOT_TITLE.test(line) || /[,;:]$/.test(line)) return false;
  const w = words(line);
  if (MULTI_LEVEL.test(line)) return w <= 12;
  if (!SINGLE_LEVEL.test(line) || w > 8) return false;
  if ((prevLine !== undefined && LIST_ITEM.test(prevLine)) || (nextLine !== undefined && LIST_ITEM.test(nextLine))) return false;
  return prevLine === undefined || /[.!?"”)\]]$/.test(prevLine) || (w <= 6 && !TERMINAL.test(line));
}

/** "2. Grant of Copyright License. Subject to..." — a paragraph opening with a run-in numbered title. */
export const RUN_IN_HEADING = /^\d{1,3}(?:\.\d{1,3})*\.\s+\p{Lu}[^.!?\n]{0,60}\.\s/u;
