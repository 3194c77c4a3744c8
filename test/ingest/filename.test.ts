import { describe, expect, it } from 'vitest';
import { MAX_FILENAME_LENGTH, sanitizeFilename } from '../../src/ingest/index.js';

describe('sanitizeFilename', () => {
  it.each([
    ['../../etc/passwd', 'passwd'],
    ['/etc/shadow', 'shadow'],
    ['C:\\x\\y.txt', 'y.txt'],
    ['..\\..\\windows\\system32\\cmd.exe', 'cmd.exe'],
    ['dir/sub/', 'sub'],
    ['report "final".pdf', 'report final.pdf'],
    ["it's `quoted`.md", 'its quoted.md'],
    ['line\nbreak\r\nname.txt', 'line break name.txt'],
    ['nul\u0000byte.txt', 'nul byte.txt'],
    ['tab\there.csv', 'tab here.csv'],
    ['invoice\u202Etxt.exe', 'invoice txt.exe'],
    ['a<b>c:d|e?f*.txt', 'a_b_c_d_e_f_.txt'],
    ['   spaced   out   .txt  ', 'spaced out .txt'],
    ['.hidden', 'hidden'],
    ['trailing dots...', 'trailing dots'],
    ['CON.txt', '_CON.txt'],
    ['Cafe\u0301.md', 'Café.md'],
    ['résumé.docx', 'résumé.docx'],
    ['', 'file'],
    ['..', 'file'],
    ['/', 'file'],
    ['\\\\server\\share\\', 'share'],
    ['"""', 'file'],
    ['\n\t', 'file'],
  ])('%j → %j', (input, expected) => {
    expect(sanitizeFilename(input)).toBe(expected);
  });

  it('limits very long names and keeps the extension', () => {
    const long = `${'a'.repeat(500)}.pdf`;
    const out = sanitizeFilename(long);
    expect(out.length).toBe(MAX_FILENAME_LENGTH);
    expect(out.endsWith('.pdf')).toBe(true);
  });

  it('limits long names without a usable extension', () => {
    expect(sanitizeFilename('b'.repeat(1000)).length).toBe(MAX_FILENAME_LENGTH);
    expect(sanitizeFilename(`x.${'y'.repeat(400)}`).length).toBe(MAX_FILENAME_LENGTH);
  });

  it('does not split surrogate pairs when truncating', () => {
    const out = sanitizeFilename(`${'😀'.repeat(300)}.txt`);
    expect(Array.from(out)).toHaveLength(MAX_FILENAME_LENGTH);
    expect(out.endsWith('😀.txt')).toBe(true);
    expect(out).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/);
  });

  it('is idempotent', () => {
    for (const name of ['../../etc/passwd', 'a "b" c.txt', `${'z'.repeat(300)}.md`]) {
      const once = sanitizeFilename(name);
      expect(sanitizeFilename(once)).toBe(once);
    }
  });
});
