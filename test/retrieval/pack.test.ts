/** Packing context under a token budget: numbered headers (what a chat answer cites) stay within it. */
import { describe, expect, it } from 'vitest';
import { countTokens } from '../../src/ingest/tokens.js';
import { planPack, renderPack, type PackOptions } from '../../src/retrieval/pack.js';
import type { ScoredChunk } from '../../src/retrieval/repo.js';

function chunk(i: number, text: string, filename = `file-${i % 3}.md`): ScoredChunk {
  return {
    chunkId: i,
    fileId: `f${i % 3}`,
    filename,
    plusId: 'p',
    heading: null,
    text,
    tokenSize: countTokens(text),
    score: 100 - i,
    rank: i + 1,
    ranking: { lexical: null, vector: null },
  };
}
/** What the services do with chunks that come with their texts: plan, then render. */
const packContext = (intro: Array<{ title: string | null; text: string }>, list: ScoredChunk[], budget: number, opts: PackOptions = {}) =>
  renderPack(planPack(intro, list, budget, opts));
const chunks = Array.from({ length: 40 }, (_, i) => chunk(i, `Passage ${i} says ${'something rather specific '.repeat(1 + (i % 5))}about item ${i}.`));

describe('packContext', () => {
  it('numbers the headers in the order of the chunks used, from 1, past 9', () => {
    const packed = packContext([{ title: null, text: 'The entry context.' }], chunks, 100_000, { numbered: true });
    expect(packed.used).toHaveLength(40);
    expect(packed.content.startsWith('The entry context.\n\n### [1] From file-0.md\nPassage 0 ')).toBe(true);
    packed.used.forEach((c, i) => expect(packed.content).toContain(`### [${i + 1}] From ${c.filename}\n${c.text}`));
    expect(packed.content).not.toContain('[41]');
  });

  it('without numbers, headers name the file only', () => {
    const packed = packContext([], chunks.slice(0, 3), 100_000);
    expect(packed.content.split('\n\n').map((b) => b.split('\n')[0])).toEqual(['### From file-0.md', '### From file-1.md', '### From file-2.md']);
  });

  it('never exceeds the budget with numbered headers, whatever the budget', () => {
    for (const budget of [50, 120, 333, 700, 1500]) {
      const packed = packContext([{ title: 'Intro', text: 'Some words of introduction.' }], chunks, budget, { numbered: true });
      expect(countTokens(packed.content)).toBeLessThanOrEqual(budget);
      expect(packed.used.length).toBeGreaterThan(0);
    }
  });
});
