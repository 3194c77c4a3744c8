import { describe, expect, it } from 'vitest';
import { countTokens, normaliseText, TOKEN_ENCODING } from '../../src/ingest/index.js';
import { fixtureText } from './helpers.js';

describe('normaliseText', () => {
  it.each([
    ['NFC', 'Cafe\u0301', 'Café'],
    ['CRLF and CR', 'a\r\nb\rc', 'a\nb\nc'],
    ['NUL and control characters', 'a\u0000b\u0007c\u001Bd\u007Fe\u0085f', 'abcde\nf'],
    ['zero-width space, BOM, soft hyphen', '\uFEFFzero\u200Bwidth co\u00ADoperate', 'zerowidth cooperate'],
    ['runs of spaces and tabs', 'a  \t b\t\tc', 'a b c'],
    ['Unicode spaces', 'a\u00A0b\u2003c\u3000d', 'a b c d'],
    ['spaces around line breaks', 'line one   \n   line two', 'line one\nline two'],
    ['runs of blank lines', 'p1\n\n\n\n\np2\n \n \t\n\np3', 'p1\n\np2\n\np3'],
    ['line and paragraph separators', 'a\u2028b\u2029c', 'a\nb\n\nc'],
    ['trim', '  \n\n hello \n\n ', 'hello'],
    ['lone surrogates', 'bad \uD800 pair \uDC00 ok \uD83D\uDE00', 'bad \uFFFD pair \uFFFD ok \uD83D\uDE00'],
    ['empty', '', ''],
    ['already clean', 'Plain ASCII.\nTwo lines.', 'Plain ASCII.\nTwo lines.'],
  ])('%s', (_label, input, expected) => {
    expect(normaliseText(input)).toBe(expected);
  });

  it('keeps zero-width joiners (emoji sequences, Indic scripts)', () => {
    expect(normaliseText('👩\u200D💻')).toBe('👩\u200D💻');
  });

  it('is idempotent on real text', () => {
    for (const name of ['gpl-3.txt', 'mammoth-readme.md', 'users-and-groups.html']) {
      const once = normaliseText(fixtureText(name));
      expect(normaliseText(once)).toBe(once);
      expect(once).not.toMatch(/[\r\t\0]| {2}|\n{3}/);
    }
  });
});

describe('countTokens', () => {
  it(`uses ${TOKEN_ENCODING}`, () => {
    expect(TOKEN_ENCODING).toBe('o200k_base');
    expect(countTokens('')).toBe(0);
    expect(countTokens('hello world')).toBe(2);
  });

  it('counts special-token strings as text instead of throwing', () => {
    expect(countTokens('<|endoftext|>')).toBeGreaterThan(1);
  });
});
