import { countTokens } from '../../ingest/tokens.js';
import type { ChatMessage } from '../../providers/types.js';

/**
 * Prompt assembly, in this order (docs/ARCHITECTURE.md "Prompt assembly"):
 *   1. one system message: the workspace model's systemInstructions, its addedContext, then
 *      context retrieved from Plus entries;
 *   2. the thread's history, newest kept first, cut to fit contextWindow − maxTokens by real
 *      token counts (o200k_base);
 *   3. the new turn(s), the last being the user's.
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
  maxTokens: number | null;
  usesSystemPrompts: boolean;
  promptWrapper: { value: string } | null;
}

/** Per-message overhead of chat formats (role markers, separators), as OpenAI documents it. */
const MESSAGE_OVERHEAD = 4;
/** Without a declared context window we still cap history, so an old thread cannot grow a prompt forever. */
const DEFAULT_WINDOW = 8192;
const DEFAULT_ANSWER_RESERVE = 1024;

export interface AssembledPrompt {
  messages: ChatMessage[];
  estimatedPromptTokens: number;
  historyUsed: number;
}

const tokensOf = (m: ChatMessage) => countTokens(m.content) + MESSAGE_OVERHEAD;

export function assemblePrompt(input: AssemblyInput): AssembledPrompt {
  const systemParts = [input.systemInstructions, input.addedContext, input.retrievedContext]
    .map((s) => s?.trim())
    .filter((s): s is string => !!s);
  const systemText = systemParts.join('\n\n');

  const newTurns = input.newTurns.map((m) => ({ ...m }));
  const lastUser = newTurns.at(-1);
  if (lastUser && input.promptWrapper && lastUser.role === 'user') {
    lastUser.content = input.promptWrapper.value.split('{{prompt}}').join(lastUser.content);
  }

  const window = input.contextWindow ?? DEFAULT_WINDOW;
  const reserve = input.maxTokens ?? Math.min(DEFAULT_ANSWER_RESERVE, Math.floor(window / 4));
  let used = (systemText ? countTokens(systemText) + MESSAGE_OVERHEAD : 0) + newTurns.reduce((n, m) => n + tokensOf(m), 0);
  const budget = window - reserve;

  const history: ChatMessage[] = [];
  for (const m of input.historyNewestFirst) {
    const cost = tokensOf(m);
    if (used + cost > budget) break;
    used += cost;
    history.push(m);
  }
  history.reverse();

  let messages: ChatMessage[] = [...history, ...newTurns];
  if (systemText) {
    if (input.usesSystemPrompts) {
      messages = [{ role: 'system', content: systemText }, ...messages];
    } else {
      const i = messages.findIndex((m) => m.role === 'user');
      if (i >= 0) messages[i] = { role: 'user', content: `${systemText}\n\n${messages[i]!.content}` };
      else messages = [{ role: 'user', content: systemText }, ...messages];
    }
  }
  // Protocols that only know user/assistant turns get inline system turns folded too.
  if (!input.usesSystemPrompts) messages = messages.map((m) => (m.role === 'system' ? { role: 'user', content: m.content } : m));
  return { messages, estimatedPromptTokens: used, historyUsed: history.length };
}

/** A thread's title: its first prompt, cut at a word boundary. */
export function titleFrom(text: string, max = 80): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length <= max) return flat || 'New chat';
  const cut = flat.slice(0, max);
  const space = cut.lastIndexOf(' ');
  return `${(space > max / 2 ? cut.slice(0, space) : cut).trimEnd()}…`;
}
