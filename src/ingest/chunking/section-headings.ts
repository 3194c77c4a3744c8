/**
 * A chunk's section headings, stored with it (plus_chunks.heading) so that retrieval can weigh
 * a question's words found in a heading above the same words in running text — and so that a
 * chunk continuing a long section still carries the heading that names its subject, which its
 * own text no longer holds.
 */
import type { Units } from './units.js';

/** At most this many characters of headings per chunk (a heading-rich chunk stays cheap to index). */
export const MAX_HEADING_CHARS = 300;

/** Markdown markers and setext underlines taken off a heading line. */
function headingText(norm: string): string {
  return norm
    .split('\n')
    .filter((l) => !/^\s*(?:=+|-+)\s*$/.test(l))
    .join(' ')
    .replace(/^\s{0,3}#{1,6}\s*/, '')
    .replace(/\s+#+\s*$/, '')
    .trim();
}

/**
 * The headings of the chunk made of units [from, end): the heading of the section it begins in
 * (when the chunk does not start with it), then the heading lines inside it, joined by " / "; null
 * when there is none.
 */
export function chunkHeading(units: Units, from: number, end: number): string | null {
  const out: string[] = [];
  if (from < end && !units.heading[from]) {
    // the section's first unit is its heading, when it has one
    let h = from;
    while (h > 0 && units.section[h - 1] === units.section[from]) h--;
    if (units.heading[h]) out.push(headingText(units.norm[h]!));
  }
  for (let i = from; i < end; i++) if (units.heading[i]) out.push(headingText(units.norm[i]!));
  const joined = out.filter((s) => s.length > 0).join(' / ');
  if (!joined) return null;
  return joined.length > MAX_HEADING_CHARS ? joined.slice(0, MAX_HEADING_CHARS) : joined;
}
