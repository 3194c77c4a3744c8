/**
 * Versions on the chat screen: reading back what a turn stored (its ids and versions, which Edit,
 * Regenerate and the version arrows need), and switching a message to another of its versions.
 */
import { api, data } from '../../api/client';
import { fromStored, type ChatItem } from './types';

/**
 * The latest `limit` stored messages of the thread, as the function that puts them in place of
 * this visit's local messages at the end of the list (null when the thread could not be read).
 */
export async function readBack(workspaceId: string, threadId: string, limit: number): Promise<((prev: ChatItem[]) => ChatItem[]) | null> {
  const page = await data(api.GET('/api/v1/chat/{workspaceId}/history/{threadId}', { params: { path: { workspaceId, threadId }, query: { limit } } })).catch(
    () => null,
  );
  if (!page) return null;
  const stored = page.messages.map(fromStored);
  return (prev) => {
    const local = prev.length - prev.findLastIndex((m) => m.id !== undefined) - 1;
    const tail = stored.slice(-Math.max(local, 1));
    // the stored tail must be what this visit showed (another tab may have moved the thread meanwhile)
    if (local === 0 || tail.length !== local || tail.some((m, i) => m.role !== prev[prev.length - local + i]!.role)) return prev;
    // each keeps what this visit showed of it (a failure's words), and takes its id and versions
    return [...prev.slice(0, prev.length - local), ...tail.map((m, i) => ({ ...prev[prev.length - local + i]!, id: m.id!, versions: m.versions! }))];
  };
}

/** Makes the version `step` away from `item` the one shown: the thread's messages as they then read (null: no such version). */
export async function switchVersion(workspaceId: string, threadId: string, item: ChatItem, step: -1 | 1): Promise<ChatItem[] | null> {
  if (!item.versions || !item.id) return null;
  const path = { workspaceId, threadId };
  const all = await data(api.GET('/api/v1/chat/{workspaceId}/history/{threadId}/versions/{messageId}', { params: { path: { ...path, messageId: item.id } } }));
  const target = all[item.versions.index - 1 + step];
  if (!target) return null;
  const t = await data(api.POST('/api/v1/chat/{workspaceId}/history/{threadId}/active', { params: { path }, body: { messageId: target.id } }));
  return t.messages.map(fromStored);
}
