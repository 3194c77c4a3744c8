import { countTokens } from '../ingest/tokens.js';
import type { ScoredChunk } from './repo.js';

export interface PackedContext {
  content: string;
  used: ScoredChunk[];
  tokens: number;
}

export interface PackPlan {
  /** the intro blocks that fit, as they are written */
  intro: string[];
  /** the chunks that fit, best first */
  used: ScoredChunk[];
  tokens: number;
  /** whether the headers carry the chunks' numbers (PackOptions) */
  numbered: boolean;
}

/**
 * What fits the token budget: the entry's own context text first, then chunks best first, each
 * under a header naming its file. A chunk that does not fit is skipped (a smaller, less relevant
 * one may still fit), so the budget is never exceeded. Needs the chunks' token sizes and file
 * names, not their texts (which can be read afterwards for those used only).
 */
export function planPack(intro: Array<{ title: string | null; text: string }>, chunks: ScoredChunk[], budget: number, opts: PackOptions = {}): PackPlan {
  const blocks: string[] = [];
  let tokens = 0;
  for (const i of intro) {
    const text = i.text.trim();
    if (!text) continue;
    const block = i.title ? `## ${i.title}\n${text}` : text;
    const cost = countTokens(block) + 2;
    if (tokens + cost > budget) continue;
    blocks.push(block);
    tokens += cost;
  }
  const used: ScoredChunk[] = [];
  for (const c of chunks) {
    // chunk token sizes are exact; the header is small and counted separately
    const cost = c.tokenSize + headerCost(c) + (opts.numbered ? numberCost(used.length + 1) : 0) + 2;
    if (tokens + cost > budget) continue;
    used.push(c);
    tokens += cost;
  }
  return { intro: blocks, used, tokens, numbered: opts.numbered === true };
}

export interface PackOptions {
  /** number the chunks' headers, `### [1] From a.md`, so that an answer can cite them by number */
  numbered?: boolean;
}

const header = (c: ScoredChunk, n?: number) => `### ${n === undefined ? '' : `[${n}] `}From ${c.filename}\n`;

/** Tokens the number adds to a header, plus one for a token boundary that may fall differently. */
const numberTokens: number[] = [];
function numberCost(n: number): number {
  return (numberTokens[n] ??= countTokens(`[${n}] `) + 1);
}

/** Token counts of chunk headers by file name (a search packs up to 50 chunks of few files). */
const headerTokens = new Map<string, number>();
function headerCost(c: ScoredChunk): number {
  let n = headerTokens.get(c.filename);
  if (n === undefined) {
    n = countTokens(header(c));
    if (headerTokens.size >= 10_000) headerTokens.clear();
    headerTokens.set(c.filename, n);
  }
  return n;
}

/** The plan written out; its chunks' texts must have been read (RetrievalRepo.hydrate). */
export function renderPack(plan: PackPlan): PackedContext {
  const parts = [...plan.intro];
  plan.used.forEach((c, i) => {
    if (c.text === null) throw new Error(`chunk ${c.chunkId} packed without its text`);
    parts.push(header(c, plan.numbered ? i + 1 : undefined) + c.text);
  });
  return { content: parts.join('\n\n'), used: plan.used, tokens: plan.tokens };
}
