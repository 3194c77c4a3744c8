/**
 * The unfinished answer lives in its own small store so that, while tokens arrive, only the
 * component showing it re-renders (not the conversation, the composer or the thread list).
 * Deltas are appended to a string and published at most once per animation frame.
 */
import { useEffect, useState } from 'preact/hooks';
import type { ChatItem } from './types';

export class LiveAnswer {
  private item: ChatItem | null = null;
  private listeners = new Set<() => void>();
  private frame = 0;

  get(): ChatItem | null {
    return this.item;
  }
  set(item: ChatItem | null): void {
    this.item = item;
    this.publish();
  }
  update(patch: Partial<ChatItem>): void {
    if (!this.item) return;
    this.item = { ...this.item, ...patch };
    this.publish();
  }
  /** Appends text; listeners hear of it on the next frame (many deltas, one render). */
  append(text: string): void {
    if (!this.item) return;
    this.item = { ...this.item, content: this.item.content + text };
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.notify();
    });
  }
  subscribe(l: () => void): () => void {
    this.listeners.add(l);
    return () => void this.listeners.delete(l);
  }
  private publish(): void {
    if (this.frame) cancelAnimationFrame(this.frame);
    this.frame = 0;
    this.notify();
  }
  private notify(): void {
    for (const l of this.listeners) l();
  }
}

export function useLive(store: LiveAnswer): ChatItem | null {
  const [, setTick] = useState(0);
  useEffect(() => store.subscribe(() => setTick((t) => t + 1)), [store]);
  return store.get();
}
