import { createHash, randomBytes } from 'node:crypto';
import type { ChatMessage } from './types.js';

/** Returns `v` when it is a finite number, otherwise undefined (so `null` params are simply not sent). */
export function num(v: number | null | undefined): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

/** Positive integer or undefined. */
export function posInt(v: number | null | undefined): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) && v >= 1 ? Math.floor(v) : undefined;
}

export interface SplitMessages {
  /** All system messages joined with a blank line, or null when there are none. */
  system: string | null;
  /** Non-system messages with consecutive same-role messages merged (blank-line separated). */
  turns: Array<{ role: 'user' | 'assistant'; content: string }>;
}

/**
 * For protocols that take the system prompt out of band (Anthropic `system`, Gemini
 * `systemInstruction`) and require user/assistant alternation.
 */
export function splitSystemAndMerge(messages: readonly ChatMessage[]): SplitMessages {
  const { system, turns } = splitSystemAndGroup(messages);
  return { system, turns: turns.map((t) => ({ role: t.role, content: joinedText(t.messages) })) };
}

export interface GroupedMessages {
  /** All system messages joined with a blank line, or null when there are none. */
  system: string | null;
  /**
   * Consecutive messages of the same side grouped into one turn: `tool` results count as the
   * user's side (Anthropic sends them in a user turn, Gemini as user `functionResponse` parts).
   */
  turns: Array<{ role: 'user' | 'assistant'; messages: ChatMessage[] }>;
}

/** {@link splitSystemAndMerge} keeping each message, for protocols that send tool calls and results as parts of a turn. */
export function splitSystemAndGroup(messages: readonly ChatMessage[]): GroupedMessages {
  const systemParts: string[] = [];
  const turns: GroupedMessages['turns'] = [];
  for (const m of messages) {
    if (m.role === 'system') {
      if (m.content) systemParts.push(m.content);
      continue;
    }
    const role = m.role === 'assistant' ? 'assistant' : 'user';
    const last = turns[turns.length - 1];
    if (last && last.role === role) last.messages.push(m);
    else turns.push({ role, messages: [m] });
  }
  return { system: systemParts.length > 0 ? systemParts.join('\n\n') : null, turns };
}

/** The texts of a turn's messages, blank-line separated (empty ones skipped). */
export function joinedText(messages: readonly ChatMessage[]): string {
  return messages
    .map((m) => m.content)
    .filter((c) => c.length > 0)
    .join('\n\n');
}

/** Whether a message is part of a tool exchange (a call or a result). */
export function isToolMessage(m: ChatMessage): boolean {
  return m.role === 'tool' || (m.toolCalls?.length ?? 0) > 0;
}

/**
 * A call's arguments as the object the Anthropic and Gemini protocols take. The OpenAI-compatible
 * API checks them (a JSON object, or empty for none) before they get here; anything else is `{}`.
 */
export function toolArguments(text: string): Record<string, unknown> {
  if (!text.trim()) return {};
  try {
    const v: unknown = JSON.parse(text);
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** The function name of each call id in the conversation (tool results name only the id). */
export function toolNamesById(messages: readonly ChatMessage[]): Map<string, string> {
  const names = new Map<string, string>();
  for (const m of messages) for (const c of m.toolCalls ?? []) names.set(c.id, c.name);
  return names;
}

/** An id for a call the protocol gave none (Gemini). */
export function newToolCallId(): string {
  return `call_${randomBytes(12).toString('hex')}`;
}

/**
 * Tiny LRU for SDK clients (keyed by connection details). Per-call options (signal, timeout,
 * retries) are passed per request, so a client can be shared by concurrent calls.
 */
export class ClientCache<T> {
  private readonly map = new Map<string, T>();
  constructor(private readonly max = 64) {}

  get(key: string, create: () => T): T {
    const hit = this.map.get(key);
    if (hit !== undefined) {
      this.map.delete(key);
      this.map.set(key, hit);
      return hit;
    }
    const client = create();
    this.map.set(key, client);
    if (this.map.size > this.max) {
      const oldest = this.map.keys().next().value;
      if (oldest !== undefined) this.map.delete(oldest);
    }
    return client;
  }

  delete(key: string): void {
    this.map.delete(key);
  }
}

/**
 * Cache key for an SDK client: the connection details with the API key replaced by a SHA-256
 * fingerprint (the raw key is not kept as a map key). A model whose URL or key changes gets a new
 * client; the old one ages out of the LRU.
 */
export function clientKey(parts: ReadonlyArray<string | null | undefined>, apiKey: string | null): string {
  const fp = apiKey ? createHash('sha256').update(apiKey).digest('base64url') : '-';
  return `${parts.map((p) => p ?? '').join('\u0000')}\u0000${fp}`;
}

/** Load a module once, on first use (the provider SDKs cost start-up time; see index.ts). */
export function lazy<T>(load: () => Promise<T>): () => Promise<T> {
  let p: Promise<T> | undefined;
  return () => {
    p ??= load().catch((err: unknown) => {
      p = undefined;
      throw err;
    });
    return p;
  };
}

/** Removes trailing slashes. */
export function trimSlashes(u: string): string {
  let end = u.length;
  while (end > 0 && u[end - 1] === '/') end--;
  return u.slice(0, end);
}

/** Fetch options that stop the SDKs from following redirects (a redirect could point at an internal address). */
export const NO_REDIRECT: { redirect: 'manual' } = { redirect: 'manual' };
