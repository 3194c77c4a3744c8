import type { Problem, Source, StoredMessage } from '../../api/client';
import type { StoredImageRef } from './images';

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
  /** the user's images, or the images an image model made */
  images?: StoredImageRef[];
  /** thumbnails of a message just sent (its stored images are known after a reload) */
  previews?: string[];
}

export function fromStored(m: StoredMessage): ChatItem {
  const item: ChatItem = { key: m.id, role: m.role, content: m.content, status: m.status, sources: m.sources, modelId: m.modelId };
  if (m.images?.length) item.images = m.images;
  // A failed turn is stored with its problem, so a reload says what failed.
  if (m.error) item.problem = { type: 'about:blank', title: 'The answer failed', status: m.error.status, code: m.error.code, detail: m.error.detail };
  return item;
}
