import type { Problem, Source, StoredMessage } from '../../api/client';
import type { StoredImageRef } from './images';
import { t } from '../../i18n';

/** A message as the conversation shows it: stored, sent just now, or still streaming. */
export interface ChatItem {
  key: string;
  role: StoredMessage['role'];
  content: string;
  status: StoredMessage['status'] | 'streaming';
  sources: Source[];
  modelId: string | null;
  /** Why an answer failed or stopped (shown under it). */
  problem?: Problem;
  /** the workspace tools the answer called (a running one has no `ok` yet) */
  toolCalls?: ToolCallItem[];
  /** The stored message's id (absent: sent just now, not yet read back; `key` then stays as it was, so the view keeps its state). */
  id?: string;
  /** Which of its versions a stored message is (absent: not yet read back). */
  versions?: { index: number; count: number };
  /** the user's images, or the images an image model made */
  images?: StoredImageRef[];
  /** thumbnails of a message just sent (its stored images are known after a reload) */
  previews?: string[];
}

export interface ToolCallItem {
  id: string;
  name: string;
  arguments: string;
  ok?: boolean;
  content?: string;
  durationMs?: number;
  /** when a streamed call started (its time is measured here) */
  startedAt?: number;
}

export function fromStored(m: StoredMessage): ChatItem {
  const item: ChatItem = {
    key: m.id,
    id: m.id,
    role: m.role,
    content: m.content,
    status: m.status,
    sources: m.sources,
    modelId: m.modelId,
    versions: m.versions,
  };
  if (m.images?.length) item.images = m.images;
  // A failed turn is stored with its problem, so a reload says what failed.
  if (m.toolCalls?.length) item.toolCalls = m.toolCalls;
  if (m.error) item.problem = { type: 'about:blank', title: t('turn.answerFailed'), status: m.error.status, code: m.error.code, detail: m.error.detail };
  return item;
}

/** The model of the thread's latest answer (what the picker shows when the thread is opened again). */
export function lastModel(items: ChatItem[]): string | null {
  for (let i = items.length - 1; i >= 0; i--) {
    const m = items[i]!;
    if (m.role === 'assistant' && m.modelId) return m.modelId;
  }
  return null;
}
