import { countTokens, firstTokens } from '../../ingest/tokens.js';
import { classifyProviderError, getAdapter, type ProviderError } from '../../providers/index.js';
import { generateImages } from '../../providers/images.js';
import type { ChatMessage, ImageContent, ProviderTimeouts, ToolCall, ToolCallDelta, Usage } from '../../providers/types.js';
import { completeWithContextRetry, streamWithContextRetry } from './context-fit.js';
import { refitAfterContextError, type AssembledPrompt, type AssemblyInput } from './prompt.js';
import type { ToolRun } from './tool-loop.js';
import type { Plan } from './turn-plan.js';
import type { TurnEvent, TurnOptions } from './turns.js';

/** Step 6 of a turn (turns.ts): the provider call, the one place the adapter is called and its failure classified. */

export const ZERO_USAGE: Usage = Object.freeze({ promptTokens: 0, completionTokens: 0, totalTokens: 0 });

/** What the prompt was fitted from, to refit it once after a context-length refusal. */
export interface Fit {
  input: AssemblyInput;
  assembled: AssembledPrompt;
}

/** How the provider call ended: the only place it is classified. `tools`: what the workspace's tools did on the way (tool-loop.ts). */
export type Outcome = (
  | { kind: 'answered'; content: string; toolCalls: ToolCall[]; finishReason: string; usage: Usage; images?: ImageContent[] }
  | { kind: 'interrupted'; content: string; error: ProviderError }
  | { kind: 'failed'; content: string; error: ProviderError }
) & { tools?: ToolRun };

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
    ...(plan.tools ? { tools: plan.tools } : {}),
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
  // Tool calls count toward `cap` like text (their name and arguments): a call cut there ends the
  // answer with finish reason `length`, as a provider's own cap does, and its arguments are incomplete.
  const calls: ToolCall[] = [];
  try {
    if (plan.model.imageGen) {
      // An image model answers with images (and maybe text), whole, streamed or not.
      const r = await generateImages(request);
      if (r.content) yield { type: 'delta', content: r.content };
      return { kind: 'answered', content: r.content, toolCalls: [], finishReason: r.finishReason, usage: r.usage, images: r.images ?? [] };
    }
    if (!opts.stream) {
      const r = await completeWithContextRetry(adapter, request, refit);
      let over = cap !== null && countTokens(r.content) > cap;
      content = over ? firstTokens(r.content, cap!) : r.content;
      yield { type: 'delta', content };
      let used = cap === null ? 0 : countTokens(content);
      for (const [index, c] of (r.toolCalls ?? []).entries()) {
        if (over) break;
        const kept = withinCap(c, cap, used);
        if (!kept) {
          over = true;
          break;
        }
        used += kept.tokens;
        over = kept.call.arguments.length < c.arguments.length;
        calls.push({ ...c, arguments: kept.call.arguments });
        yield { type: 'tool_call', call: { index, id: c.id, name: c.name, arguments: kept.call.arguments } };
      }
      return { kind: 'answered', content, toolCalls: calls, finishReason: over ? 'length' : r.finishReason, usage: r.usage };
    }
    let outputTokens = 0;
    for await (const ev of streamWithContextRetry(adapter, request, refit)) {
      if (ev.type === 'done') return { kind: 'answered', content, toolCalls: calls, finishReason: ev.finishReason, usage: ev.usage };
      if (ev.type === 'tool_call') {
        const kept = withinCap(ev.call, cap, outputTokens);
        if (kept) {
          addToolCallDelta(calls, kept.call);
          yield { type: 'tool_call', call: kept.call };
          outputTokens += kept.tokens;
        }
        if (!kept || kept.call.arguments.length < ev.call.arguments.length) {
          return { kind: 'answered', content, toolCalls: calls, finishReason: 'length', usage: ZERO_USAGE };
        }
        continue;
      }
      if (cap !== null) {
        // Counted piece by piece: never fewer tokens than the text has as a whole, so the cut is never late.
        const n = countTokens(ev.content);
        if (outputTokens + n > cap) {
          const rest = firstTokens(ev.content, cap - outputTokens);
          content += rest;
          if (rest) yield { type: 'delta', content: rest };
          return { kind: 'answered', content, toolCalls: calls, finishReason: 'length', usage: ZERO_USAGE };
        }
        outputTokens += n;
      }
      content += ev.content;
      yield ev;
    }
    // A stream that ended without a final event: keep what came, as complete text.
    return { kind: 'answered', content, toolCalls: calls, finishReason: 'stop', usage: ZERO_USAGE };
  } catch (err) {
    const error = classifyProviderError(err);
    return opts.signal?.aborted ? { kind: 'interrupted', content, error } : { kind: 'failed', content, error };
  }
}

/** Adds a streamed piece to the calls it belongs to (the first piece of a call opens it). */
function addToolCallDelta(calls: ToolCall[], d: ToolCallDelta): void {
  const c = (calls[d.index] ??= { id: '', name: '', arguments: '' });
  if (d.id) c.id = d.id;
  if (d.name) c.name = d.name;
  c.arguments += d.arguments;
}

/**
 * A tool call (or a streamed piece of one) within the output cap, `used` tokens of it already
 * taken: its name (when the piece carries it) and as much of its arguments as fits; null when not
 * even the name fits. Without a cap, the call whole and nothing counted.
 */
function withinCap<C extends { name?: string; arguments: string }>(call: C, cap: number | null, used: number): { call: C; tokens: number } | null {
  if (cap === null) return { call, tokens: 0 };
  const room = cap - used;
  const nameTokens = call.name ? countTokens(call.name) : 0;
  if (nameTokens > room) return null;
  const argTokens = countTokens(call.arguments);
  if (nameTokens + argTokens <= room) return { call, tokens: nameTokens + argTokens };
  const args = firstTokens(call.arguments, room - nameTokens);
  return { call: { ...call, arguments: args }, tokens: nameTokens + countTokens(args) };
}
