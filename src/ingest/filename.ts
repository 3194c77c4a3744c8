/**
 * Make a user-supplied filename safe to store and to echo back in headers, logs and UIs.
 *  - keeps only the last path component (both "/" and "\" separate components, so
 *    "../../etc/passwd" → "passwd" and "C:\x\y.txt" → "y.txt");
 *  - removes control characters (incl. CR/LF/NUL), bidi overrides, quotes and backticks;
 *  - replaces characters reserved on Windows (< > : | ? *) with "_";
 *  - collapses whitespace, strips leading dots and trailing dots/spaces;
 *  - prefixes Windows device names (CON, NUL, COM1...) with "_";
 *  - limits the name to MAX_FILENAME_LENGTH code points, keeping a short extension;
 *  - never returns an empty string ("file").
 */
export const MAX_FILENAME_LENGTH = 200;
const MAX_EXTENSION_LENGTH = 16;

const CONTROL = /[\x00-\x1F\x7F-\x9F\u200B-\u200F\u202A-\u202E\u2066-\u2069\uFEFF]/g;
const QUOTES = /["'`\u2018\u2019\u201C\u201D]/g;
const RESERVED = /[<>:|?*]/g;
const WINDOWS_DEVICE = /^(con|prn|aux|nul|com[0-9]|lpt[0-9])(\.|$)/i;

export function sanitizeFilename(name: string): string {
  let s = String(name ?? '');
  // Last non-empty path component.
  const parts = s.split(/[/\\]+/).filter((p) => p.length > 0);
  s = parts.length > 0 ? parts[parts.length - 1]! : '';
  s = s
    .replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '')
    .normalize('NFC')
    .replace(CONTROL, ' ')
    .replace(QUOTES, '')
    .replace(RESERVED, '_')
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/^[.\s]+/, '')
    .replace(/[.\s]+$/, '');
  if (WINDOWS_DEVICE.test(s)) s = `_${s}`;

  const chars = Array.from(s);
  if (chars.length > MAX_FILENAME_LENGTH) {
    const dot = s.lastIndexOf('.');
    const ext = dot > 0 ? Array.from(s.slice(dot)) : [];
    if (ext.length > 1 && ext.length <= MAX_EXTENSION_LENGTH) {
      const base = chars.slice(0, chars.length - ext.length);
      s =
        base
          .slice(0, MAX_FILENAME_LENGTH - ext.length)
          .join('')
          .trimEnd() + ext.join('');
    } else {
      s = chars.slice(0, MAX_FILENAME_LENGTH).join('').trimEnd();
    }
  }
  return s.length > 0 ? s : 'file';
}
