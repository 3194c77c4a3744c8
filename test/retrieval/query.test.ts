import { describe, expect, it } from 'vitest';
import { chooseTerms, presentTerms, quoteLexeme, TERM_OPTIONS, type TermStat } from '../../src/retrieval/query.js';

const t = (lexeme: string, df: number): TermStat => ({ lexeme, df });

describe('presentTerms', () => {
  it('keeps the lexemes that occur, once each, rarest first (ties by lexeme)', () => {
    expect(presentTerms([t('b', 5), t('zero', 0), t('a', 5), t('c', 1), t('b', 5)])).toEqual([t('c', 1), t('a', 5), t('b', 5)]);
  });
});

describe('chooseTerms', () => {
  it('is null when no lexeme of the question occurs in scope', () => {
    expect(chooseTerms([], 100)).toBeNull();
    expect(chooseTerms([t('x', 0)], 100)).toBeNull();
  });

  it('on a small entry: one OR of the rarest lexemes, at most maxTerms of them', () => {
    const stats = Array.from({ length: 12 }, (_, i) => t(`w${String(i).padStart(2, '0')}`, 12 - i));
    const c = chooseTerms(stats, 40)!;
    expect(c.rank).toHaveLength(TERM_OPTIONS.maxTerms);
    expect(c.rank[0]).toBe('w11'); // df 1: the rarest first
    expect(c.rank).not.toContain('w00'); // df 12: among the commonest, left out
    expect(c.steps).toEqual([{ kind: 'any', match: c.rank.map(quoteLexeme).join(' | '), clauses: c.rank.map((l) => [l]), excluded: [] }]);
  });

  it('weighs lexemes by inverse document frequency', () => {
    const c = chooseTerms([t('rare', 2), t('common', 50)], 100)!;
    expect(c.idf[0]).toBeCloseTo(Math.log(1 + (100 - 2 + 0.5) / (2 + 0.5)));
    expect(c.idf[1]).toBeCloseTo(Math.log(1 + (100 - 50 + 0.5) / (50 + 0.5)));
    expect(c.idf[0]).toBeGreaterThan(c.idf[1]!);
  });

  it('on a large entry: rare lexemes alone, commoner ones in pairs, widening step by step', () => {
    const opts = { ...TERM_OPTIONS, budget: 100 };
    const c = chooseTerms([t('rare', 40), t('fewer', 50), t('mid', 2000), t('more', 3000), t('most', 5000)], 100_000, opts)!;
    // rare + fewer = 90 ≤ budget: candidates alone; the others only in pairs
    expect(c.rank).toEqual(['rare', 'fewer', 'mid', 'more', 'most']);
    expect(c.steps.map((s) => s.kind)).toEqual(['rare or rarest pair', 'any pair', 'rarest']);
    expect(c.steps[0]!.match).toBe("'rare' | 'fewer' | ( 'mid' & 'more' )");
    // each later step leaves out what the step before matched
    expect(c.steps[1]!.match).toBe(
      "( 'rare' | 'fewer' | ( 'mid' & 'more' ) | ( 'mid' & 'most' ) | ( 'more' & 'most' ) ) & !( 'rare' | 'fewer' | ( 'mid' & 'more' ) )",
    );
    expect(c.steps[2]!.match).toBe("( 'rare' | 'fewer' | 'mid' ) & !( 'rare' | 'fewer' | ( 'mid' & 'more' ) | ( 'mid' & 'most' ) | ( 'more' & 'most' ) )");
    // the same as lexemes (what the in-memory index evaluates)
    expect(c.steps[2]!.clauses).toEqual([['rare'], ['fewer'], ['mid']]);
    expect(c.steps[2]!.excluded).toEqual(c.steps[1]!.clauses);
    expect(c.steps[1]!.excluded).toEqual([['rare'], ['fewer'], ['mid', 'more']]);
  });

  it('a lone lexeme above the budget is searched alone; none is paired with itself', () => {
    const c = chooseTerms([t('only', 5000)], 100_000)!;
    expect(c.steps).toEqual([{ kind: 'rarest', match: "'only'", clauses: [['only']], excluded: [] }]);
  });

  it('the rarer of a pair must not be very common', () => {
    // rare fits the budget; the others are all in more than 20 % of the chunks: no pairs of them
    const c = chooseTerms([t('rare', 10), t('big', 30_000), t('bigger', 40_000)], 100_000)!;
    expect(c.steps).toEqual([{ kind: 'any', match: "'rare'", clauses: [['rare']], excluded: [] }]);
  });

  it('when every lexeme is very common, the chunks holding all of them', () => {
    const c = chooseTerms([t('use', 60_000), t('file', 45_000), t('licens', 30_000)], 100_000)!;
    expect(c.steps).toEqual([{ kind: 'all', match: "'licens' & 'file' & 'use'", clauses: [['licens', 'file', 'use']], excluded: [] }]);
    // …but not on a small entry, where "very common" has a floor
    expect(chooseTerms([t('use', 60), t('file', 45)], 100)!.steps[0]!.kind).toBe('any');
  });

  it('is deterministic', () => {
    const stats = [t('b', 700), t('a', 700), t('c', 900), t('d', 20)];
    expect(chooseTerms(stats, 50_000)).toEqual(chooseTerms([...stats].reverse(), 50_000));
  });
});

describe('quoteLexeme', () => {
  it('quotes a lexeme for a tsquery literal, escaping quotes and backslashes', () => {
    expect(quoteLexeme('plain')).toBe("'plain'");
    expect(quoteLexeme("o'reilly")).toBe("'o''reilly'");
    expect(quoteLexeme('a\\b')).toBe("'a\\\\b'");
  });
});
