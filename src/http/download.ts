/**
 * Files answered as downloads: a Content-Disposition that cannot break out of its header or
 * smuggle a path (RFC 6266), and a file name any OS accepts made from a user-given title.
 */

/** `attachment` with an ASCII `filename` for old clients and the exact name as `filename*` (RFC 8187). */
export function attachmentHeader(filename: string): string {
  // Only printable ASCII in the quoted form; `"` and `\` would end or escape the string, and some
  // browsers percent-decode it, so `%` goes too.
  const ascii = filename.replace(/[^\x20-\x7e]/g, '_').replace(/["\\%]/g, '_');
  const encoded = encodeURIComponent(filename).replace(/['()*!]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}

const RESERVED_ON_WINDOWS = /^(con|prn|aux|nul|com[0-9]|lpt[0-9])(\..*)?$/i;
const MAX_BASE = 100;

/**
 * A file name made from a title: no path separators, control characters or characters Windows
 * refuses (`<>:"/\|?*`), whitespace collapsed, no leading/trailing dots or spaces, not a name
 * Windows reserves, at most 100 characters (whole code points) before `.ext`; `fallback` when
 * nothing is left.
 */
export function safeFilename(title: string, ext: string, fallback = 'download'): string {
  let base = title
    .normalize('NFC')
    .replace(/[\u0000-\u001f\u007f-\u009f<>:"/\\|?*\u2028\u2029]/g, ' ')
    .replace(/\s+/g, ' ')
    .replace(/^[\s.]+|[\s.]+$/g, '');
  base = Array.from(base)
    .slice(0, MAX_BASE)
    .join('')
    .replace(/[\s.]+$/, '');
  if (base === '') base = fallback;
  if (RESERVED_ON_WINDOWS.test(base)) base = `_${base}`;
  return `${base}.${ext}`;
}
