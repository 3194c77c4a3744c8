/**
 * Pure pieces of the chat screen, run in node: the thread list's date groups, which sources are
 * listed under an answer (the relevance cut), and which source numbers an answer cites.
 */
import { describe, expect, it } from 'vitest';
import { citedNumbers } from '../../web/src/lib/citations.js';
import { splitSources } from '../../web/src/screens/chat/sources.js';
import { groupByDay, groupOf } from '../../web/src/screens/chat/thread-groups.js';

describe('thread groups', () => {
  const now = new Date(2026, 10, 27, 9, 30);
  const at = (daysBack: number, hour = 12) => new Date(2026, 10, 27 - daysBack, hour);

  it('groups by calendar day, not by 24-hour spans', () => {
    expect(groupOf(new Date(2026, 10, 27, 0, 1), now)).toBe('Today');
    expect(groupOf(new Date(2026, 10, 26, 23, 59), now)).toBe('Yesterday');
    expect(groupOf(at(2), now)).toBe('Last 7 days');
    expect(groupOf(at(6), now)).toBe('Last 7 days');
    expect(groupOf(at(7), now)).toBe('Last 30 days');
    expect(groupOf(at(29), now)).toBe('Last 30 days');
    expect(groupOf(at(30), now)).toBe('Older');
    expect(groupOf(at(400), now)).toBe('Older');
    // a clock a little ahead of the reader's still reads as today
    expect(groupOf(new Date(2026, 10, 27, 10), now)).toBe('Today');
  });

  it('keeps the order of the items and leaves out empty groups', () => {
    const threads = [at(0), at(0, 8), at(3), at(45)].map((d, i) => ({ id: i, updated: d.toISOString() }));
    expect(groupByDay(threads, (t) => t.updated, now).map((g) => [g.name, g.items.map((t) => t.id)])).toEqual([
      ['Today', [0, 1]],
      ['Last 7 days', [2]],
      ['Older', [3]],
    ]);
    expect(groupByDay([], (t: { updated: string }) => t.updated, now)).toEqual([]);
  });
});

describe('sources under an answer', () => {
  const src = (score: number, filename = 'a.md') => ({ plusId: 'p', fileId: 'f', filename, chunkId: 1, score, excerpt: 'x' });

  it('lists those within half the best score and every cited one, numbered as the model saw them', () => {
    const sources = [src(9.2), src(6.1), src(4.6), src(2.0), src(0.4), src(3.1)];
    const { listed, less } = splitSources(sources, [5]);
    expect(listed.map((x) => x.n)).toEqual([1, 2, 3, 5]);
    expect(less.map((x) => x.n)).toEqual([4, 6]);
    expect(listed.find((x) => x.n === 5)?.cited).toBe(true);
  });

  it('lists everything when no score is positive (passages from a document start)', () => {
    const { listed, less } = splitSources([src(0), src(0), src(0)], []);
    expect(listed).toHaveLength(3);
    expect(less).toEqual([]);
  });
});

describe('citations', () => {
  it('reads [n], [10] and [1, 4] markers, within the number of sources, each once', () => {
    expect(citedNumbers('Flights go through the desk [1]. Trains too [10][2], see [1, 4] and [12].', 11)).toEqual([1, 10, 2, 4]);
    expect(citedNumbers('No markers here, only [a link](x) and [ ].', 3)).toEqual([]);
    expect(citedNumbers('[0] and [4]', 3)).toEqual([]);
  });
});
