/**
 * How much of a thread fits a model's real window (docs/ARCHITECTURE.md "Prompt assembly").
 *
 * Atrium counts with o200k_base, but the model counts with its own tokenizer — llama's counts
 * ~20–30 % more for the same English text. So local counts are scaled by a calibration factor:
 * what the provider reported as `promptTokens` for the thread's last answered turn, divided by
 * Atrium's own estimate of that prompt (stored with the answer's usage as `localPromptTokens`).
 * A safety margin is kept on top, and a provider that still refuses for context length gets one
 * retry with a stricter fit ({@link retryCalibration}).
 *
 * The fitting rules are pure functions; the two retry wrappers at the end take the adapter.
 */
import type { StoredUsage } from '../../db/schema/chat.js';
import { classifyProviderError } from '../../providers/classify.js';
import type { ProviderError } from '../../providers/errors.js';
import type { ChatMessage, Completion, ProviderAdapter, ProviderRequest, StreamEvent } from '../../providers/types.js';
import { DEFAULT_CONTEXT_WINDOW } from '../models/service.js';

/** Upper bound of the default output cap. */
export const MAX_DEFAULT_OUTPUT_TOKENS = 4096;
/** Share of the window kept free on top of the output reserve (tokenizer drift, chat template tokens). */
export const SAFETY_MARGIN_SHARE = 0.05;
export const MIN_SAFETY_MARGIN = 32;
/** Calibration is clamped: a provider counting fewer tokens never buys more history; absurd ratios are ignored. */
export const MIN_CALIBRATION = 1;
export const MAX_CALIBRATION = 4;

/**
 * The output cap sent when neither the request, the workspace model nor the model sets
 * `maxTokens`: min(4096, a quarter of the window) — so a model that never stops cannot stream
 * for minutes and fill its own context.
 */
export function defaultMaxOutputTokens(contextWindow: number | null | undefined): number {
  const window = contextWindow && contextWindow > 0 ? contextWindow : DEFAULT_CONTEXT_WINDOW;
  return Math.max(1, Math.min(MAX_DEFAULT_OUTPUT_TOKENS, Math.floor(window / 4)));
}

/** The output cap actually sent: the configured one, else {@link defaultMaxOutputTokens}. */
export function effectiveMaxTokens(maxTokens: number | null | undefined, contextWindow: number | null | undefined): number {
  return typeof maxTokens === 'number' && maxTokens >= 1 ? Math.floor(maxTokens) : defaultMaxOutputTokens(contextWindow);
}

/**
 * Prompt tokens available in the provider's own count: window − output reserve − safety margin
 * (at least 1, so a prompt of only the new turn is still attempted).
 */
export function promptBudget(contextWindow: number | null | undefined, maxTokens: number): number {
  const window = contextWindow && contextWindow > 0 ? contextWindow : DEFAULT_CONTEXT_WINDOW;
  const margin = Math.max(MIN_SAFETY_MARGIN, Math.ceil(window * SAFETY_MARGIN_SHARE));
  return Math.max(1, window - maxTokens - margin);
}

const clamp = (r: number): number => Math.min(MAX_CALIBRATION, Math.max(MIN_CALIBRATION, r));

/** Usage stored with an answer: the provider's figures plus Atrium's own estimate of the prompt. */
export type CalibratedUsage = StoredUsage & { localPromptTokens?: number };

/**
 * Provider tokens per local token, from the newest answer of the thread by this model that carries
 * both figures (history newest first; `localPromptTokens` is only stored when the provider reported
 * usage). `fallback` when none does (a new thread, a conversation kept by the client in its
 * request, a provider reporting no usage, another model so far): the model's latest ratio on this
 * node when known, else 1.
 */
export function calibrationFrom(
  historyNewestFirst: ReadonlyArray<{ role: string; modelId?: string | null; usage?: CalibratedUsage | null }>,
  modelId?: string,
  fallback?: number,
): number {
  for (const m of historyNewestFirst) {
    if (m.role !== 'assistant' || !m.usage) continue;
    if (modelId !== undefined && m.modelId !== modelId) continue; // another tokenizer
    const local = m.usage.localPromptTokens;
    const reported = m.usage.promptTokens;
    if (typeof local === 'number' && local > 0 && typeof reported === 'number' && reported > 0) {
      return clamp(reported / local);
    }
  }
  return fallback !== undefined && Number.isFinite(fallback) ? clamp(fallback) : 1;
}

/**
 * The stricter calibration for the one retry after a context-length refusal: the provider's own
 * prompt count when its error carried one (llama.cpp's `n_prompt_tokens`) over our estimate,
 * plus 10 %; otherwise 1.5× the calibration that failed.
 */
export function retryCalibration(failed: number, estimatedPromptTokens: number, reportedPromptTokens?: number): number {
  const fromReport = reportedPromptTokens && reportedPromptTokens > 0 && estimatedPromptTokens > 0 ? (reportedPromptTokens / estimatedPromptTokens) * 1.1 : 0;
  return Math.min(MAX_CALIBRATION * 2, Math.max(failed * 1.5, fromReport));
}

/**
 * Call the provider; when it refuses for context length, ask `refit` for a shorter prompt and
 * try exactly once more. `refit` returns null when nothing can be dropped (then the refusal stands).
 */
export async function completeWithContextRetry(
  adapter: ProviderAdapter,
  req: ProviderRequest,
  refit: (pe: ProviderError) => ChatMessage[] | null,
): Promise<Completion> {
  try {
    return await adapter.complete(req);
  } catch (err) {
    const messages = refitOnce(err, refit, req.signal);
    if (!messages) throw err;
    return adapter.complete({ ...req, messages });
  }
}

/** The streaming twin of {@link completeWithContextRetry}: retries only while nothing was streamed yet. */
export async function* streamWithContextRetry(
  adapter: ProviderAdapter,
  req: ProviderRequest,
  refit: (pe: ProviderError) => ChatMessage[] | null,
): AsyncGenerator<StreamEvent> {
  let emitted = false;
  try {
    for await (const ev of adapter.stream(req)) {
      emitted = true;
      yield ev;
    }
    return;
  } catch (err) {
    const messages = emitted ? null : refitOnce(err, refit, req.signal);
    if (!messages) throw err;
    yield* adapter.stream({ ...req, messages });
  }
}

function refitOnce(err: unknown, refit: (pe: ProviderError) => ChatMessage[] | null, signal?: AbortSignal): ChatMessage[] | null {
  if (signal?.aborted) return null;
  const pe = classifyProviderError(err);
  return pe.kind === 'upstream_context_length' ? refit(pe) : null;
}
