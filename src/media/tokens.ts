/**
 * What an image counts for in a prompt, by each protocol's published rule (docs/DECISIONS.md,
 * "Image tokens"). Atrium fits the prompt and reserves budgets with these figures; the ledger then
 * takes the provider's own count when it reports one.
 */
import type { ApiBase } from '../providers/types.js';

/** OpenAI (detail `auto`, counted as `high`): fit in 2048², shortest side to 768, then 170 per 512-px tile + 85. */
function openaiTokens(width: number, height: number): number {
  let w = width;
  let h = height;
  const fit = Math.min(1, 2048 / Math.max(w, h));
  w *= fit;
  h *= fit;
  const shortest = Math.min(w, h);
  if (shortest > 768) {
    w *= 768 / shortest;
    h *= 768 / shortest;
  }
  return 85 + 170 * Math.ceil(w / 512) * Math.ceil(h / 512);
}

/** Anthropic: the long edge scaled to at most 1568 px, then width × height / 750. */
function anthropicTokens(width: number, height: number): number {
  const s = Math.min(1, 1568 / Math.max(width, height));
  return Math.ceil((width * s * (height * s)) / 750);
}

/** Gemini: 258 when both sides are at most 384 px, else 258 per tile of side min(w, h)/1.5 (clamped to 256–768). */
function geminiTokens(width: number, height: number): number {
  if (width <= 384 && height <= 384) return 258;
  const unit = Math.min(768, Math.max(256, Math.floor(Math.min(width, height) / 1.5)));
  return 258 * Math.ceil(width / unit) * Math.ceil(height / unit);
}

export function imageTokens(apiBase: ApiBase, width: number, height: number): number {
  switch (apiBase) {
    case 'OPENAI':
      return openaiTokens(width, height);
    case 'ANTHROPIC':
      return anthropicTokens(width, height);
    case 'GOOGLE':
      return geminiTokens(width, height);
  }
}
