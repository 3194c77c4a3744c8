import { countTokens } from '../../ingest/tokens.js';
import type { ChatMessage } from '../../providers/types.js';
import { DEFAULT_CONTEXT_WINDOW } from '../models/service.js';
import { effectiveMaxTokens, promptBudget, retryCalibration } from './context-fit.js';

/**
 * Prompt assembly, in this order (docs/ARCHITECTURE.md "Prompt assembly"):
 *   1. one system message: the workspace model's systemInstructions, its addedContext, then
 *      context retrieved from Plus entries;
 *   2. the conversation before the request's last turn — the thread's stored history, then the
 *      request's own earlier turns (an OpenAI-style client keeps the whole conversation in
 *      `messages`) — newest kept first, cut so that the prompt — o200k_base counts scaled by the
 *      calibration (context-fit.ts) — fits contextWindow − maxTokens − a safety margin. The
 *      request's system messages are always kept, in their place;
 *   3. the request's last turn, the user's — or, when the request ends in a tool exchange (an
 *      assistant's tool calls and their results), its last user turn and everything after it.
 * A tool exchange of the conversation is kept or dropped whole: an assistant message with tool
 * calls and the tool results after it (a result is never sent without its call).
 * Then the model's quirks: usesSystemPrompts=false folds the system text into the first user
 * turn; a promptWrapper wraps the last user text at {{prompt}}.
 */
export interface AssemblyInput {
  systemInstructions: string | null;
  addedContext: string | null;
  retrievedContext: string | null;
  /** previous messages of the thread, newest first */
  historyNewestFirst: ChatMessage[];
  newTurns: ChatMessage[];
  contextWindow: number | null;
  /** The output cap sent upstream; null: the default cap (context-fit.ts). */
  maxTokens: number | null;
  usesSystemPrompts: boolean;
  promptWrapper: { value: string } | null;
  /** Provider tokens per o200k token for this thread (context-fit.ts `calibrationFrom`); default 1. */
  calibration?: number;
  /** Keep at most this many earlier turns (the retry's last resort); default: as many as fit. */
  historyLimit?: number;
  /** o200k tokens of the tool definitions offered with the prompt (they take room in the window too) */
  toolTokens?: number;
}

/** Per-message overhead of chat formats (role markers, separators), as OpenAI documents it. */
const MESSAGE_OVERHEAD = 4;
export interface AssembledPrompt {
  messages: ChatMessage[];
  /** o200k_base estimate of the whole prompt (not calibrated). */
  estimatedPromptTokens: number;
  /** Earlier turns kept (stored history and the request's own, system messages not counted). */
  historyUsed: number;
}

/**
 * A message's o200k tokens with its format overhead; an assistant's tool calls count with their
 * names and arguments, images with what their protocol counts for them (set by images.ts).
 */
export function tokensOf(m: ChatMessage): number {
  let n = countTokens(m.content) + MESSAGE_OVERHEAD;
  for (const i of m.images ?? []) n += i.tokens ?? 0;
  for (const c of m.toolCalls ?? []) n += countTokens(c.name) + countTokens(c.arguments) + MESSAGE_OVERHEAD;
  return n;
}

/**
 * Where the request's kept tail starts: its last turn, or — when that is a tool exchange — the
 * last user turn before it, so the question and the calls it led to go together.
 */
function tailStart(turns: readonly ChatMessage[]): number {
  const last = turns.length - 1;
  if (last < 0 || turns[last]!.role === 'user') return Math.max(0, last);
  for (let i = last; i >= 0; i--) if (turns[i]!.role === 'user') return i;
  return last;
}

/** Earlier turns as units that are dropped whole: an assistant's tool calls with their results, or one message. */
function units<T extends { m: ChatMessage }>(oldestFirst: readonly T[]): T[][] {
  const out: T[][] = [];
  for (const c of oldestFirst) {
    const open = out.at(-1);
    if (c.m.role === 'tool' && open && (open[0]!.m.toolCalls?.length ?? 0) > 0) open.push(c);
    else out.push([c]);
  }
  return out;
}

export function assemblePrompt(input: AssemblyInput): AssembledPrompt {
  const systemParts = [input.systemInstructions, input.addedContext, input.retrievedContext].map((s) => s?.trim()).filter((s): s is string => !!s);
  const systemText = systemParts.join('\n\n');

  const turns = input.newTurns.map((m) => ({ ...m }));
  const start = tailStart(turns);
  const lastUser = turns[start];
  if (lastUser && input.promptWrapper && lastUser.role === 'user') {
    lastUser.content = input.promptWrapper.value.split('{{prompt}}').join(lastUser.content);
  }
  // The request's earlier turns may be dropped like stored history (they are newer than it); its
  // system messages and its tail may not.
  const earlier = turns.slice(0, start);
  const tail = turns.slice(start);
  const kept = tail.concat(earlier.filter((m) => m.role === 'system'));
  const requestUnits = units(earlier.map((m, i) => ({ m, requestIndex: i as number | null })).filter((c) => c.m.role !== 'system')).reverse();
  const historyUnits = units([...input.historyNewestFirst].reverse().map((m) => ({ m, requestIndex: null as number | null }))).reverse();
  const candidates = [...requestUnits, ...historyUnits];
  const limit = input.historyLimit ?? Infinity;

  const window = input.contextWindow ?? DEFAULT_CONTEXT_WINDOW;
  const reserve = effectiveMaxTokens(input.maxTokens, window);
  const calibration = input.calibration && input.calibration > 0 ? input.calibration : 1;
  let used = (systemText ? countTokens(systemText) + MESSAGE_OVERHEAD : 0) + kept.reduce((n, m) => n + tokensOf(m), 0) + (input.toolTokens ?? 0);
  // The budget is in the provider's tokens; local counts are scaled into them.
  const budget = promptBudget(window, reserve) / calibration;

  const history: ChatMessage[] = [];
  const keptRequest = new Set<number>();
  let taken = 0;
  for (const unit of candidates) {
    const cost = unit.reduce((n, c) => n + tokensOf(c.m), 0);
    if (used + cost > budget || taken + unit.length > limit) break;
    taken += unit.length;
    used += cost;
    for (const c of [...unit].reverse()) {
      if (c.requestIndex === null) history.push(c.m);
      else keptRequest.add(c.requestIndex);
    }
  }
  history.reverse();
  const requestTurns = earlier.filter((m, i) => m.role === 'system' || keptRequest.has(i));

  let messages: ChatMessage[] = [...history, ...requestTurns, ...tail];
  if (systemText) {
    if (input.usesSystemPrompts) {
      messages = [{ role: 'system', content: systemText }, ...messages];
    } else {
      const i = messages.findIndex((m) => m.role === 'user');
      if (i >= 0) messages[i] = { ...messages[i]!, role: 'user', content: `${systemText}\n\n${messages[i]!.content}` };
      else messages = [{ role: 'user', content: systemText }, ...messages];
    }
  }
  // Protocols that only know user/assistant turns get inline system turns folded too.
  if (!input.usesSystemPrompts) messages = messages.map((m) => (m.role === 'system' ? { role: 'user', content: m.content } : m));
  return { messages, estimatedPromptTokens: used, historyUsed: history.length + keptRequest.size };
}

/**
 * The prompt for the one retry after the provider refused `failed` for context length: a stricter
 * calibration (from the provider's own prompt count when its error gave one) and the window it
 * reported, if smaller; always less history than `failed`. Null when `failed` had no history.
 */
export function refitAfterContextError(
  input: AssemblyInput,
  failed: AssembledPrompt,
  reported: { contextLimit?: number | undefined; promptTokens?: number | undefined },
): AssembledPrompt | null {
  if (failed.historyUsed === 0) return null;
  const calibration = retryCalibration(input.calibration ?? 1, failed.estimatedPromptTokens, reported.promptTokens);
  const declared = input.contextWindow ?? DEFAULT_CONTEXT_WINDOW;
  const contextWindow = reported.contextLimit ? Math.min(declared, reported.contextLimit) : declared;
  const again = assemblePrompt({ ...input, calibration, contextWindow });
  if (again.historyUsed < failed.historyUsed) return again;
  const keep = Math.floor(failed.historyUsed / 2);
  return assemblePrompt({ ...input, calibration, contextWindow, historyLimit: keep });
}

/** A thread's title: its first prompt, cut at a word boundary. */
export function titleFrom(text: string, max = 80): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length <= max) return flat || 'New chat';
  const cut = flat.slice(0, max);
  const space = cut.lastIndexOf(' ');
  return `${(space > max / 2 ? cut.slice(0, space) : cut).trimEnd()}…`;
}
