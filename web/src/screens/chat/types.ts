import type { Problem, Source, StoredMessage } from '../../api/client';

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
  const item: ChatItem = { key: m.id, role: m.role, content: m.content, status: m.status, sources: m.sources, modelId: m.modelId };
  // A failed turn is stored with its problem, so a reload says what failed.
  if (m.toolCalls?.length) item.toolCalls = m.toolCalls;
  if (m.error) item.problem = { type: 'about:blank', title: 'The answer failed', status: m.error.status, code: m.error.code, detail: m.error.detail };
  return item;
}
