import { createHash } from 'node:crypto';
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
  const systemParts: string[] = [];
  const turns: SplitMessages['turns'] = [];
  for (const m of messages) {
    if (m.role === 'system') {
      if (m.content) systemParts.push(m.content);
      continue;
    }
    const last = turns[turns.length - 1];
    if (last && last.role === m.role) {
      last.content = last.content ? (m.content ? `${last.content}\n\n${m.content}` : last.content) : m.content;
    } else {
      turns.push({ role: m.role, content: m.content });
    }
  }
  return { system: systemParts.length > 0 ? systemParts.join('\n\n') : null, turns };
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
