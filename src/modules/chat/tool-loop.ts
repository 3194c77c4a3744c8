import type { StoredToolCall } from '../../db/schema.js';
import { withDeadline } from '../../deadline.js';
import { countTokens, firstTokens } from '../../ingest/tokens.js';
import { ProviderError } from '../../providers/index.js';
import type { ChatMessage, ProviderTimeouts, ToolCall, Usage } from '../../providers/types.js';
import { describe, type Toolbox } from '../mcp/service.js';
import { assemblePrompt, tokensOf } from './prompt.js';
import { callProvider, ZERO_USAGE, type Fit, type Outcome } from './provider-call.js';
import type { Plan } from './turn-plan.js';
import { estimateIfMissing } from './turn-records.js';
import type { TurnCost } from '../usage/service.js';
import type { TurnEvent, TurnOptions } from './turns.js';

/**
 * Step 6 of a turn whose workspace offers MCP tools (docs/API.md, "Tools in chat turns"): the
 * provider call, then the tools the model asked for, their results sent back, again, until the
 * model answers. At most MAX_TOOL_STEPS provider calls (the last is told to call no tool), each
 * tool call under the toolbox's timeout (MCP_CALL_TIMEOUT_MS, 30 s) and its result cut to MAX_TOOL_RESULT_TOKENS; the calls of
 * one answer run in parallel; a failing call goes back to the model as an error result. Every
 * step's prompt is fitted like the first (the exchange so far is the turn's tail, tool
 * definitions counted), and a step is made only while the turn's budget allows it.
 */

export const MAX_TOOL_STEPS = 8;
export const MAX_TOOL_RESULT_TOKENS = 16_000;

/** What the tools did in a turn (Outcome.tools). */
export interface ToolRun {
  calls: StoredToolCall[];
  /** the tokens of the provider calls before the last one (an answered outcome's `usage` includes them already) */
  priorUsage: Usage;
}

/** Whether the turn may make another provider call, having used `spent` so far, with a prompt of about `nextPromptTokens`. */
export type StepAllowance = (spent: Usage, nextPromptTokens: number) => boolean;

const addUsage = (a: Usage, b: Usage): Usage => ({
  promptTokens: a.promptTokens + b.promptTokens,
  completionTokens: a.completionTokens + b.completionTokens,
  totalTokens: a.totalTokens + b.totalTokens,
});

/** The provider call and tool steps of a turn with a toolbox; returns how the turn ended, its tools in `tools`. */
export async function* runWithTools(
  plan: Plan & { toolbox: Toolbox },
  first: Fit,
  opts: TurnOptions,
  cap: number | null,
  timeouts: ProviderTimeouts,
  allow: StepAllowance,
): AsyncGenerator<TurnEvent, Outcome> {
  const calls: StoredToolCall[] = [];
  let fit = first;
  let spent = ZERO_USAGE;
  let text = '';
  for (let step = 1; ; step++) {
    const last = step === MAX_TOOL_STEPS;
    // The last step may not call: it answers from what the tools said (Anthropic needs the definitions while results are in the prompt).
    const stepPlan = last ? { ...plan, tools: { definitions: plan.toolbox.definitions, choice: 'none' as const } } : plan;
    const o = yield* withoutCallPieces(callProvider(stepPlan, fit, opts, cap, timeouts), text ? '\n\n' : '');
    const content = text && o.content ? `${text}\n\n${o.content}` : text || o.content;
    if (o.kind !== 'answered') return { ...o, content, tools: { calls, priorUsage: spent } };
    const usage = addUsage(
      spent,
      estimateIfMissing(o.usage, fit.assembled.estimatedPromptTokens, o.content + o.toolCalls.map((c) => c.name + c.arguments).join('')),
    );
    const wanted = o.toolCalls.filter((c) => c.id && c.name);
    const answered = (finishReason: string): Outcome => ({
      kind: 'answered',
      content,
      toolCalls: [],
      finishReason,
      usage,
      tools: { calls, priorUsage: spent },
    });
    // An answer, a call cut by the output cap (its arguments incomplete), or calls on the last step end the turn.
    if (wanted.length === 0 || o.finishReason === 'length') return answered(wanted.length === 0 ? o.finishReason : 'length');
    if (last) return answered('length');
    const assistant: ChatMessage = { role: 'assistant', content: o.content, toolCalls: wanted };
    // A budget that cannot pay for one more call stops the loop before the tools run.
    if (!allow(usage, fit.assembled.estimatedPromptTokens + tokensOf(assistant))) return answered('length');
    for (const c of wanted) yield { type: 'tool_run', call: { id: c.id, name: c.name, arguments: c.arguments } };
    const results = yield* runCalls(plan.toolbox, wanted, step, opts.signal);
    calls.push(...results);
    if (opts.signal?.aborted) {
      return {
        kind: 'interrupted',
        content,
        error: new ProviderError('aborted', 'The turn was cancelled while a tool ran'),
        tools: { calls, priorUsage: usage },
      };
    }
    const input = { ...fit.input, newTurns: [...fit.input.newTurns, assistant, ...results.map(resultMessage)] };
    fit = { input, assembled: assemblePrompt(input) };
    spent = usage;
    text = content;
  }
}

/** A result as the model reads it: the tool's text, or the failure as an error. */
function resultMessage(r: StoredToolCall): ChatMessage {
  return { role: 'tool', toolCallId: r.id, content: r.ok ? r.content : `Error: ${r.content}` };
}

/**
 * The provider call's events without the pieces of its tool calls (the turn runs them; the
 * stream shows `tool_run` and `tool_result` instead); `separator` goes before a later step's first text.
 */
async function* withoutCallPieces(gen: AsyncGenerator<TurnEvent, Outcome>, separator: string): AsyncGenerator<TurnEvent, Outcome> {
  let pending = separator;
  for (let r = await gen.next(); ; r = await gen.next()) {
    if (r.done) return r.value;
    const ev = r.value;
    if (ev.type === 'tool_call') continue;
    if (ev.type === 'delta') {
      if (!ev.content) continue;
      if (pending) yield { type: 'delta', content: pending };
      pending = '';
    }
    yield ev;
  }
}

/** Runs the calls of one answer in parallel; each result is yielded as it arrives and all are returned in the calls' order. */
async function* runCalls(toolbox: Toolbox, wanted: ToolCall[], step: number, signal: AbortSignal | undefined): AsyncGenerator<TurnEvent, StoredToolCall[]> {
  const out: StoredToolCall[] = [];
  const pending = new Map<number, Promise<number>>();
  wanted.forEach((c, i) =>
    pending.set(
      i,
      runCall(toolbox, c, step, signal).then((r) => {
        out[i] = r;
        return i;
      }),
    ),
  );
  while (pending.size > 0) {
    const i = await Promise.race(pending.values());
    pending.delete(i);
    const r = out[i]!;
    yield { type: 'tool_result', id: r.id, ok: r.ok, content: r.content };
  }
  return out;
}

/** One call under its timeout and the turn's abort; never throws: a failure is an error result. */
async function runCall(toolbox: Toolbox, c: ToolCall, step: number, signal: AbortSignal | undefined): Promise<StoredToolCall> {
  const started = Date.now();
  return withDeadline(toolbox.timeoutMs, async (timeout) => {
    const both = signal ? AbortSignal.any([signal, timeout]) : timeout;
    const record = (ok: boolean, content: string): StoredToolCall => ({
      id: c.id,
      name: c.name,
      arguments: c.arguments,
      ok,
      content,
      durationMs: Date.now() - started,
      step,
    });
    try {
      const r = await toolbox.call(c.name, c.arguments, both, toolbox.timeoutMs);
      return record(r.ok, cutResult(r.content));
    } catch (err) {
      if (signal?.aborted) return record(false, 'The call was cancelled: the client went away');
      if (timeout.aborted || (err as { code?: number }).code === -32001) return record(false, `The tool did not answer within ${toolbox.timeoutMs / 1000} s`);
      return record(false, cutResult(describe(err)));
    }
  });
}

/** Text is counted in pieces of this many characters: o200k's BPE slows down quadratically on one long run without breaks. */
const PIECE_CHARS = 512;

/**
 * A result longer than MAX_TOOL_RESULT_TOKENS keeps its first tokens and says it was cut. Counted
 * piece by piece (a token across a piece boundary counts twice, so the cut is never late), which
 * bounds the tokenizer's work whatever the text.
 */
export function cutResult(text: string): string {
  let used = 0;
  for (let at = 0; at < text.length;) {
    let end = Math.min(text.length, at + PIECE_CHARS);
    if (end < text.length && /[\uD800-\uDBFF]/.test(text[end - 1]!)) end--; // never split a surrogate pair
    const piece = text.slice(at, end);
    const n = countTokens(piece);
    if (used + n > MAX_TOOL_RESULT_TOKENS) {
      return `${text.slice(0, at)}${firstTokens(piece, MAX_TOOL_RESULT_TOKENS - used)}\n[cut: the result was longer than ${MAX_TOOL_RESULT_TOKENS.toLocaleString('en')} tokens]`;
    }
    used += n;
    at = end;
  }
  return text;
}

/**
 * What a turn with tools reserves against its budgets: two provider calls' worth (the first, and
 * one more with the results), not one. Later steps are made while what was spent and the next
 * call fit what was reserved (StepAllowance), so a budget stops a loop and is never overspent.
 */
export function toolTurnCost(c: TurnCost): TurnCost {
  return { ...c, promptTokens: c.promptTokens * 2 + c.maxOutput, promptCap: c.promptCap * 2 + c.maxOutput };
}
