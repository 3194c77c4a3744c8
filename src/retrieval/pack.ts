import { countTokens } from '../ingest/tokens.js';
import type { ScoredChunk } from './repo.js';

export interface PackedContext {
  content: string;
  used: ScoredChunk[];
  tokens: number;
}

/**
 * The entry's own context text first, then chunks best first, each under a header naming its
 * file, until the token budget is spent. A chunk that does not fit is skipped (a smaller, less
 * relevant one may still fit), so the budget is never exceeded.
 */
export function packContext(
  intro: Array<{ title: string | null; text: string }>,
  chunks: ScoredChunk[],
  budget: number,
): PackedContext {
  const parts: string[] = [];
  let tokens = 0;
  for (const i of intro) {
    const text = i.text.trim();
    if (!text) continue;
    const block = i.title ? `## ${i.title}\n${text}` : text;
    const cost = countTokens(block) + 2;
    if (tokens + cost > budget) continue;
    parts.push(block);
    tokens += cost;
  }
  const used: ScoredChunk[] = [];
  for (const c of chunks) {
    const header = `### From ${c.filename}\n`;
    // chunk token sizes are exact; the header is small and counted separately
    const cost = c.tokenSize + countTokens(header) + 2;
    if (tokens + cost > budget) continue;
    parts.push(header + c.text);
    used.push(c);
    tokens += cost;
  }
  return { content: parts.join('\n\n'), used, tokens };
}
