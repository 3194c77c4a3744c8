import { describe, expect, it } from 'vitest';
import { chunkText, countTokens, normaliseText } from '../../src/ingest/index.js';
import type { Chunk, ChunkOptions } from '../../src/ingest/index.js';
import { fixtureText } from './helpers.js';

const GPL = fixtureText('gpl-3.txt');
const README = fixtureText('mammoth-readme.md');

/** Start/end offsets of each chunk in the source (chunks are raw slices, in order). */
function locate(text: string, chunks: Chunk[]): Array<[number, number]> {
  const spans: Array<[number, number]> = [];
  let from = 0;
  for (const c of chunks) {
    const at = text.indexOf(c.text, from);
    expect(at, `chunk ${c.index} is a slice of the text, after the previous chunk's start`).toBeGreaterThanOrEqual(0);
    spans.push([at, at + c.text.length]);
    from = at + 1;
  }
  return spans;
}

/** Offsets of Markdown ATX heading lines outside code fences. */
function headingOffsets(text: string): number[] {
  const out: number[] = [];
  let fenced = false;
  let pos = 0;
  for (const line of text.split('\n')) {
    if (/^ {0,3}(```|~~~)/.test(line)) fenced = !fenced;
    else if (!fenced && /^ {0,3}#{1,6}\s/.test(line)) out.push(pos + line.indexOf('#'));
    pos += line.length + 1;
  }
  return out;
}

function checkInvariants(text: string, opts: ChunkOptions): Chunk[] {
  const chunks = chunkText(text, opts);
  const max = opts.maxTokens ?? 400;
  const spans = locate(text, chunks);
  for (const [i, c] of chunks.entries()) {
    expect(c.index).toBe(i);
    expect(c.tokenSize, `chunk ${i} exact count`).toBe(countTokens(c.processed));
    expect(c.tokenSize, `chunk ${i} within limit`).toBeLessThanOrEqual(max);
    expect(c.tokenSize).toBeGreaterThan(0);
    expect(c.processed).toBe(normaliseText(c.text));
    expect(c.text).toBe(c.text.trim());
  }
  // Order and full coverage: each chunk starts after the previous one's start and no text is skipped.
  for (let i = 1; i < spans.length; i++) {
    expect(spans[i]![0]).toBeGreaterThan(spans[i - 1]![0]);
    const gap = text.slice(spans[i - 1]![1], Math.max(spans[i]![0], spans[i - 1]![1]));
    expect(gap.trim(), `nothing lost between chunks ${i - 1} and ${i}`).toBe('');
  }
  expect(text.slice(0, spans[0]![0]).trim()).toBe('');
  expect(text.slice(spans[spans.length - 1]![1]).trim()).toBe('');
  return chunks;
}

describe('chunkText invariants on real documents', () => {
  for (const [name, text] of [
    ['gpl-3.txt', GPL],
    ['mammoth-readme.md', README],
  ] as const) {
    for (const maxTokens of [400, 128, 50, 1000]) {
      it(`${name} at maxTokens ${maxTokens}: limits, exact counts, order, coverage`, () => {
        const chunks = checkInvariants(text, { maxTokens });
        expect(chunks.length).toBeGreaterThanOrEqual(Math.floor(countTokens(normaliseText(text)) / maxTokens));
      });
    }
  }

  it('packs chunks reasonably full (median ≥ 60% of maxTokens)', () => {
    const sizes = chunkText(GPL)
      .map((c) => c.tokenSize)
      .sort((a, b) => a - b);
    expect(sizes[Math.floor(sizes.length / 2)]!).toBeGreaterThanOrEqual(240);
  });

  it('overlaps consecutive chunks of the same section by ≤ overlapTokens, starting at a sentence', () => {
    const chunks = chunkText(GPL, { maxTokens: 200, overlapTokens: 50 });
    const spans = locate(GPL, chunks);
    let overlaps = 0;
    for (let i = 1; i < spans.length; i++) {
      const [start] = spans[i]!;
      const prevEnd = spans[i - 1]![1];
      if (start >= prevEnd) continue;
      overlaps++;
      const shared = normaliseText(GPL.slice(start, prevEnd));
      expect(countTokens(shared)).toBeLessThanOrEqual(50);
      expect(chunks[i - 1]!.processed.endsWith(shared)).toBe(true);
      expect(chunks[i]!.processed.startsWith(shared)).toBe(true);
    }
    expect(overlaps).toBeGreaterThan(chunks.length / 3);
  });

  it('overlapTokens: 0 gives disjoint chunks', () => {
    const spans = locate(GPL, chunkText(GPL, { overlapTokens: 0 }));
    for (let i = 1; i < spans.length; i++) expect(spans[i]![0]).toBeGreaterThanOrEqual(spans[i - 1]![1]);
  });

  it('never starts a chunk mid-sentence when sentences fit (GPL, default options)', () => {
    const spans = locate(GPL, chunkText(GPL));
    for (const [start] of spans.slice(1)) {
      const before = GPL.slice(Math.max(0, start - 40), start);
      const paragraphStart = /\n[ \t]*\n[ \t]*$/.test(before);
      const sentenceEnd = /[.!?:;]["')\]]*\s+$/.test(before);
      expect(paragraphStart || sentenceEnd, `chunk starting at …${JSON.stringify(before)}|${JSON.stringify(GPL.slice(start, start + 30))}`).toBe(true);
    }
  });

  it('respects Markdown headings: a heading starts its chunk, or its whole section is inside it', () => {
    const chunks = chunkText(README);
    const spans = locate(README, chunks);
    const headings = headingOffsets(README);
    expect(headings.length).toBeGreaterThan(40);
    for (const [i, [s, e]] of spans.entries()) {
      for (const [h, at] of headings.entries()) {
        if (at <= s || at >= e) continue;
        // A chunk may open with a chain of headings ("### API" then "#### convertToHtml").
        const before = README.slice(s, at)
          .split('\n')
          .filter((l) => l.trim() !== '');
        if (before.every((l) => /^ {0,3}#{1,6}\s/.test(l))) continue;
        const sectionEnd = headings[h + 1] ?? README.length;
        expect(README.slice(e, Math.max(e, sectionEnd)).trim(), `heading at ${at} inside chunk ${i} has its whole section`).toBe('');
      }
      if (i < chunks.length - 1) {
        const lastLine = chunks[i]!.processed.split('\n').pop()!;
        expect(/^#{1,6}\s/.test(lastLine), `chunk ${i} ends with a bare heading`).toBe(false);
      }
    }
    // And most headings do start a chunk.
    const starts = new Set(spans.map(([s]) => s));
    expect(headings.filter((h) => starts.has(h)).length).toBeGreaterThan(10);
  });

  it('does not overlap across a heading', () => {
    const chunks = chunkText(README);
    for (const c of chunks.slice(1)) {
      const firstHeading = c.processed.search(/^#{1,6}\s/m);
      if (firstHeading > 0) {
        // Text before a heading inside a chunk is that chunk's own earlier section, never overlap
        // from the previous chunk: the previous chunk must not end with the same text.
        const head = c.processed.slice(0, firstHeading).trim();
        expect(chunks[c.index - 1]!.processed.endsWith(head)).toBe(false);
      }
    }
  });

  it('recognises numbered and ALL-CAPS headings in plain text (GPL sections start chunks)', () => {
    const starts = chunkText(GPL).map((c) => c.processed.split('\n')[0]);
    expect(starts).toContain('TERMS AND CONDITIONS');
    expect(starts.filter((l) => /^\d+\. [A-Z]/.test(l!)).length).toBeGreaterThanOrEqual(8);
  });

  it('headingAware: false ignores headings', () => {
    const md = '# A\n\nalpha one.\n\n# B\n\nbeta two.';
    expect(chunkText(md, { maxTokens: 400 }).map((c) => c.processed)).toEqual([md]);
    const aware = chunkText(`${md}\n\n${'gamma three. '.repeat(200)}`, { maxTokens: 400 });
    const unaware = chunkText(`${md}\n\n${'gamma three. '.repeat(200)}`, { maxTokens: 400, headingAware: false });
    expect(aware.length).toBeGreaterThan(1);
    expect(unaware[0]!.processed.startsWith('# A')).toBe(true);
  });
});

describe('chunkText edge cases', () => {
  it('returns no chunks for empty or blank text', () => {
    expect(chunkText('')).toEqual([]);
    expect(chunkText(' \n\n\t ')).toEqual([]);
  });

  it('splits a giant sentence at word boundaries, as a last resort', () => {
    const words = GPL.replace(/[.!?;:]/g, '')
      .split(/\s+/)
      .slice(0, 3000)
      .join(' ');
    const chunks = checkInvariants(words, { maxTokens: 100, overlapTokens: 20 });
    expect(chunks.length).toBeGreaterThan(25);
    for (const c of chunks) expect(c.text).toMatch(/^\S.*\S$/s);
  });

  it('cuts a giant word (base64 blob) anywhere, still within the limit', () => {
    let blob = '';
    for (let i = 0; blob.length < 20000; i++) blob += ((i * 2654435761) >>> 0).toString(36);
    const chunks = checkInvariants(`Intro line.\n\n${blob}\n\nOutro line.`, { maxTokens: 64 });
    expect(chunks.map((c) => c.text).join('')).toContain(blob.slice(0, 100));
    expect(chunks.length).toBeGreaterThan(20);
  });

  it('splits long line-structured blocks (code, records) at line boundaries', () => {
    const code = Array.from({ length: 400 }, (_, i) => `const value${i} = compute(${i}, "item ${i}");`).join('\n');
    const chunks = checkInvariants(code, { maxTokens: 120 });
    for (const c of chunks) expect(c.text.startsWith('const value')).toBe(true);
  });

  it('handles CJK text without spaces between sentences', () => {
    const ja = Array.from({ length: 60 }, (_, i) => `吾輩は猫である${i}。名前はまだ無い${i}。どこで生れたかとんと見当がつかぬ${i}。`).join('');
    const chunks = checkInvariants(ja, { maxTokens: 80, overlapTokens: 10 });
    for (const c of chunks.slice(1)) expect(c.text.startsWith('吾輩') || c.text.startsWith('名前') || c.text.startsWith('どこ')).toBe(true);
  });

  it('treats special-token strings and control characters as plain text', () => {
    const text = 'Models end text with <|endoftext|> markers.\0 Some\u0007 noise. <|im_start|>user';
    const [chunk] = chunkText(text);
    expect(chunk!.processed).toBe('Models end text with <|endoftext|> markers. Some noise. <|im_start|>user');
    expect(chunk!.tokenSize).toBe(countTokens(chunk!.processed));
  });

  it('keeps exact counts with CRLF, tabs, NBSP and combining characters', () => {
    const text = 'Cafe\u0301 au lait.\r\n\r\nTabs\there\u00A0and   spaces.\r\nNext line.\u2029New para.';
    checkInvariants(text, { maxTokens: 16, overlapTokens: 4 });
    expect(chunkText(text)[0]!.processed).toBe('Café au lait.\n\nTabs here and spaces.\nNext line.\n\nNew para.');
  });

  it('validates options', () => {
    expect(() => chunkText('x', { maxTokens: 4 })).toThrow(RangeError);
    expect(() => chunkText('x', { maxTokens: 100.5 })).toThrow(RangeError);
    expect(() => chunkText('x', { overlapTokens: -1 })).toThrow(RangeError);
    // Overlap is capped at half the chunk size.
    expect(() => chunkText(GPL, { maxTokens: 40, overlapTokens: 500 })).not.toThrow();
  });
});
