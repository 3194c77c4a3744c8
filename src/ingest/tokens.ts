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
 *
 * Loading: the encoding's rank table costs a few hundred milliseconds of start-up, so it is
 * loaded on first use, synchronously (callers keep a synchronous API). The server calls
 * {@link preloadTokenizer} once it is ready, so the first request does not pay for it.
 */
import { createRequire } from 'node:module';
import type * as O200k from 'gpt-tokenizer/encoding/o200k_base';

export const TOKEN_ENCODING = 'o200k_base';

// An empty disallow-set makes special-token strings plain text instead of an error.
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

let encoding: typeof O200k | null = null;

/** The encoding module, loaded on the first call (one instance: always through require). */
function o200k(): typeof O200k {
  encoding ??= createRequire(import.meta.url)('gpt-tokenizer/encoding/o200k_base') as typeof O200k;
  return encoding;
}

/** Load the encoding now (idempotent); for a moment when blocking the event loop is harmless. */
export function preloadTokenizer(): void {
  o200k();
}

/** Whether the encoding is loaded yet (tests and diagnostics). */
export function tokenizerLoaded(): boolean {
  return encoding !== null;
}

/** Exact number of o200k_base tokens in `text` (special-token strings count as text). */
export function countTokens(text: string): number {
  if (text.length === 0) return 0;
  return o200k().countTokens(text, PLAIN_TEXT);
}

/** o200k_base token ids of `text` (special-token strings encoded as text). */
export function encodeTokens(text: string): number[] {
  return o200k().encode(text, PLAIN_TEXT);
}

/** The first `n` o200k_base tokens of `text`, as text (all of it when it has no more). */
export function firstTokens(text: string, n: number): string {
  const ids = encodeTokens(text);
  return ids.length <= n ? text : o200k().decode(ids.slice(0, Math.max(0, n)));
}
