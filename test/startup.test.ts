import { describe, expect, it } from 'vitest';
import { countTokens, encodeTokens, preloadTokenizer, tokenizerLoaded } from '../src/ingest/tokens.js';
import { startTestApp } from './helpers/app.js';

describe('start-up work', () => {
  it('builds the app without loading the tokenizer, which loads on first use with the same counts', async () => {
    const t = await startTestApp();
    try {
      expect(tokenizerLoaded()).toBe(false);
      expect(countTokens('')).toBe(0);
      expect(tokenizerLoaded()).toBe(false);
      // o200k_base: "hello world" is two tokens; special-token text counts as ordinary text.
      expect(encodeTokens('hello world')).toEqual([24912, 2375]);
      expect(tokenizerLoaded()).toBe(true);
      expect(countTokens('<|endoftext|>')).toBeGreaterThan(1);
      preloadTokenizer();
      expect(countTokens('hello world')).toBe(2);
    } finally {
      await t.close();
    }
  }, 120_000);
});
