/**
 * The provider call of a turn: the one place the adapter is called and its failure classified
 * (answered, interrupted, failed), a context-length refusal refitted once, the answer cut at a cap.
 */
import { countTokens, firstTokens } from '../../ingest/tokens.js';
import { classifyProviderError, getAdapter, type ProviderError } from '../../providers/index.js';
import type { ChatMessage, ProviderTimeouts, Usage } from '../../providers/types.js';
import { completeWithContextRetry, streamWithContextRetry } from './context-fit.js';
import { refitAfterContextError, type AssembledPrompt, type AssemblyInput } from './prompt.js';
import type { Plan } from './turn-plan.js';
import type { TurnEvent, TurnOptions } from './turns.js';

export const ZERO_USAGE: Usage = Object.freeze({ promptTokens: 0, completionTokens: 0, totalTokens: 0 });

/** What the prompt was fitted from, to refit it once after a context-length refusal. */
export interface Fit {
  input: AssemblyInput;
  assembled: AssembledPrompt;
}

/** How the provider call ended: the only place it is classified. */
export type Outcome =
  | { kind: 'answered'; content: string; finishReason: string; usage: Usage }
  | { kind: 'interrupted'; content: string; error: ProviderError }
  | { kind: 'failed'; content: string; error: ProviderError };

/**
 * The one place the provider is called and its failure classified. Yields deltas, returns how
 * the call ended. A context-length refusal (before anything streamed) is retried once with a
 * prompt refitted on less history; `fit` then holds the prompt that was sent. With `cap`, the
 * answer ends at that many output tokens in Atrium's count (finish reason `length`): a stream is
 * cut there and the provider's stream closed, a whole answer shortened.
 */
export async function* callProvider(
  plan: Plan,
  fit: Fit,
  opts: TurnOptions,
  cap: number | null,
  timeouts: ProviderTimeouts,
): AsyncGenerator<TurnEvent, Outcome> {
  const adapter = getAdapter(plan.target.apiBase, plan.target.connectionType);
  const request = {
    target: plan.target,
    messages: fit.assembled.messages,
    params: plan.params,
    timeouts,
    ...(opts.signal ? { signal: opts.signal } : {}),
  };
  const refit = (pe: ProviderError): ChatMessage[] | null => {
    const again = refitAfterContextError(fit.input, fit.assembled, pe);
    if (!again) return null;
    fit.assembled = again;
    return again.messages;
  };
  let content = '';
  try {
    if (!opts.stream) {
      const r = await completeWithContextRetry(adapter, request, refit);
      const over = cap !== null && countTokens(r.content) > cap;
      content = over ? firstTokens(r.content, cap) : r.content;
      yield { type: 'delta', content };
      return { kind: 'answered', content, finishReason: over ? 'length' : r.finishReason, usage: r.usage };
    }
    let outputTokens = 0;
    for await (const ev of streamWithContextRetry(adapter, request, refit)) {
      if (ev.type === 'done') return { kind: 'answered', content, finishReason: ev.finishReason, usage: ev.usage };
      if (cap !== null) {
        // Counted piece by piece: never fewer tokens than the text has as a whole, so the cut is never late.
        const n = countTokens(ev.content);
        if (outputTokens + n > cap) {
          const rest = firstTokens(ev.content, cap - outputTokens);
          content += rest;
          if (rest) yield { type: 'delta', content: rest };
          return { kind: 'answered', content, finishReason: 'length', usage: ZERO_USAGE };
        }
        outputTokens += n;
      }
      content += ev.content;
      yield ev;
    }
    // A stream that ended without a final event: keep what came, as complete text.
    return { kind: 'answered', content, finishReason: 'stop', usage: ZERO_USAGE };
  } catch (err) {
    const error = classifyProviderError(err);
    return opts.signal?.aborted ? { kind: 'interrupted', content, error } : { kind: 'failed', content, error };
  }
}
