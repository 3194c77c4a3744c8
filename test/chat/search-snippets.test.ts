import { describe, expect, it } from 'vitest';
import { snippetOf, unmark } from '../../src/modules/chat/highlight.js';
import { searchTerms } from '../../src/modules/chat/search-repo.js';

const S = '\u0002';
const E = '\u0003';

describe('unmark', () => {
  it('returns plain text with one space for each run of white space, and the marked words’ offsets', () => {
    const r = unmark(`  Hello\n\n ${S}big${E}   ${S}world${E}!  `);
    expect(r.text).toBe('Hello big world!');
    expect(r.highlights.map(([s, e]) => r.text.slice(s, e))).toEqual(['big', 'world']);
  });

  it('ignores a mark cut in half and counts offsets in UTF-16 units', () => {
    const r = unmark(`word${E} 😀 ${S}ünïcode${E} ${S}cut`);
    expect(r.text).toBe('word 😀 ünïcode cut');
    expect(r.highlights).toEqual([[8, 15]]);
    expect(r.text.slice(8, 15)).toBe('ünïcode');
  });
});

describe('snippetOf', () => {
  it('drops words cut by the window and shows an ellipsis at a cut edge', () => {
    const r = snippetOf(`rtial start ${S}match${E} and the en`, true, true);
    expect(r.text).toBe('… start match and the …');
    expect(r.highlights.map(([s, e]) => r.text.slice(s, e))).toEqual(['match']);
  });

  it('keeps a window that is the whole message as it is', () => {
    expect(snippetOf(`a ${S}b${E}`, false, false)).toEqual({ text: 'a b', highlights: [[2, 3]] });
  });
});

describe('searchTerms', () => {
  it('takes the last word as a prefix only while it is being typed', () => {
    expect(searchTerms('kubernetes clus')).toEqual({ whole: 'kubernetes ', prefix: 'clus' });
    expect(searchTerms('kubernetes cluster ')).toEqual({ whole: 'kubernetes cluster ', prefix: null });
    expect(searchTerms('what is it?')).toEqual({ whole: 'what is it?', prefix: null });
    expect(searchTerms("x:* & 'y")).toEqual({ whole: "x:* & '", prefix: 'y' });
    expect(searchTerms(' ?! ')).toBeNull();
  });
});
