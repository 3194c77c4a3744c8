/**
 * Token counting for chunk sizing.
 *
 * Encoding: **o200k_base** — the tokenizer of the GPT-4o / GPT-4.1 / GPT-5 / o-series
 * models. It is imported from its own module so only that encoding's ranks load.
 * Counts are a sizing measure for embedding/context budgets; other providers'
 * tokenizers differ by a few percent.
 *
 * Special-token strings such as "<|endoftext|>" inside user documents are counted
 * as ordinary text (gpt-tokenizer would otherwise throw on them).
 */
import { countTokens as countRaw, encode as encodeRaw } from 'gpt-tokenizer/encoding/o200k_base';

export const TOKEN_ENCODING = 'o200k_base';

// An empty disallow-set makes special-token strings plain text instead of an error.
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

/** Exact number of o200k_base tokens in `text` (special-token strings count as text). */
export function countTokens(text: string): number {
  if (text.length === 0) return 0;
  return countRaw(text, PLAIN_TEXT);
}

/** o200k_base token ids of `text` (special-token strings encoded as text). */
export function encodeTokens(text: string): number[] {
  return encodeRaw(text, PLAIN_TEXT);
}
