/**
 * Text normalisation applied to everything that is embedded or shown to a model
 * (`fileDataProcessed`):
 *  - Unicode NFC; lone UTF-16 surrogates become U+FFFD (PostgreSQL rejects them);
 *  - CRLF, CR, NEL, LS and PS become "\n"; a paragraph separator (U+2029) becomes a blank line;
 *  - NUL and other C0/C1 control characters, zero-width space, BOM and soft hyphen are removed
 *    (tab and newline are kept as whitespace);
 *  - tabs and Unicode spaces (NBSP, thin space, ideographic space...) become a plain space;
 *  - runs of spaces collapse to one, spaces at line starts/ends are removed,
 *    runs of blank lines collapse to one blank line; the result is trimmed.
 */

// Anything that could need work. Clean printable ASCII with single newlines skips every step.
const NEEDS_WORK = /[^\x20-\x7E\n]| {2}| \n|\n |\n\n\n|^[ \n]|[ \n]$/;
const NON_ASCII = /[^\x00-\x7F]/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const LINE_BREAKS = /\r\n?|[\u0085\u2028]/g;
const PARA_SEP = /\u2029/g;
const SPACES = /[\t\v\f\u00A0\u1680\u2000-\u200A\u202F\u205F\u3000]/g;
// C0 controls except \t \n (and \v \f, already turned into spaces), DEL, C1 controls,
// zero-width space, word joiner, BOM / zero-width no-break space, soft hyphen.
const CONTROLS = /[\x00-\x08\x0E-\x1F\x7F-\x9F\u00AD\u200B\u2060\uFEFF]/g;
const SPACE_RUNS = / {2,}/g;
const SPACE_AROUND_NL = / ?\n ?/g;
const BLANK_RUNS = /\n{3,}/g;

export function normaliseText(text: string): string {
  if (!NEEDS_WORK.test(text)) return text;
  let s = text;
  if (NON_ASCII.test(s)) {
    s = s.replace(LONE_SURROGATE, '\uFFFD').normalize('NFC');
  }
  s = s
    .replace(LINE_BREAKS, '\n')
    .replace(PARA_SEP, '\n\n')
    .replace(SPACES, ' ')
    .replace(CONTROLS, '')
    .replace(SPACE_RUNS, ' ')
    .replace(SPACE_AROUND_NL, '\n')
    .replace(BLANK_RUNS, '\n\n');
  return s.trim();
}

/** True when `text` contains at least one visible character (after normalisation rules). */
export function hasVisibleText(text: string): boolean {
  return /[^\s\x00-\x1F\x7F-\x9F\u00AD\u200B\u2060\uFEFF]/.test(text);
}
