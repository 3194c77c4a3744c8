import { MARK_END, MARK_START } from './search-repo.js';

/** Plain text and the [start, end) offsets of its highlighted words (UTF-16 code units, as JavaScript indexes strings). */
export interface Highlighted {
  text: string;
  highlights: Array<[number, number]>;
}

/**
 * Text marked by ts_headline (MARK_START … MARK_END around each matched word) → plain text with
 * every run of white space made one space and the ends trimmed, and the offsets of the marked
 * words in that text.
 */
export function unmark(marked: string): Highlighted {
  let text = '';
  const highlights: Array<[number, number]> = [];
  let start = -1;
  let space = false;
  const flushSpace = () => {
    if (space && text.length > 0) text += ' ';
    space = false;
  };
  for (const ch of marked) {
    if (ch === MARK_START) {
      flushSpace();
      start = text.length;
    } else if (ch === MARK_END) {
      if (start >= 0 && text.length > start) highlights.push([start, text.length]);
      start = -1;
    } else if (/\s/u.test(ch)) {
      space = true;
    } else {
      flushSpace();
      text += ch;
    }
  }
  return { text, highlights };
}

const ELLIPSIS = '…';

/**
 * A snippet from a window of marked text: a word cut by either edge of the window is dropped,
 * and an ellipsis stands for the text beyond an edge that is not the message's own.
 */
export function snippetOf(window: string, cutStart: boolean, cutEnd: boolean): Highlighted {
  let w = window;
  if (cutStart) w = w.replace(/^\S*\s/u, '');
  if (cutEnd) w = w.replace(/\s\S*$/u, '');
  const { text, highlights } = unmark(w);
  if (!cutStart && !cutEnd) return { text, highlights };
  const shift = cutStart ? ELLIPSIS.length + 1 : 0;
  return {
    text: `${cutStart ? `${ELLIPSIS} ` : ''}${text}${cutEnd ? ` ${ELLIPSIS}` : ''}`,
    highlights: highlights.map(([s, e]) => [s + shift, e + shift]),
  };
}
