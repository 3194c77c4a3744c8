/**
 * Files attached in a chat go into a private Plus entry of that chat ("Files of a chat"): the
 * entry is created at the first attachment, each file is added with its own request (so each has
 * its own progress and its own refusal), through the chat's add-file with the thread once the
 * thread exists. The entry is also chosen as context for the chat's turns (a new chat has no
 * thread to link files to yet). Which entries a thread draws on is remembered in this browser.
 */
import type { Plus } from '../../api/client';
import { uploadForm } from '../../api/upload';

export interface ChatPlusMemory {
  plusIds: string[];
  filesPlusId: string | null;
}

const KEY = (threadId: string) => `atrium.chat.${threadId}`;

export function rememberedPlus(threadId: string | null): ChatPlusMemory {
  if (!threadId) return { plusIds: [], filesPlusId: null };
  try {
    const v = JSON.parse(localStorage.getItem(KEY(threadId)) ?? 'null') as ChatPlusMemory | null;
    if (v && Array.isArray(v.plusIds)) return v;
  } catch {
    // unreadable memory: start empty
  }
  return { plusIds: [], filesPlusId: null };
}

export function rememberPlus(threadId: string, memory: ChatPlusMemory): void {
  try {
    localStorage.setItem(KEY(threadId), JSON.stringify(memory));
  } catch {
    // storage full or disabled: the choice lasts for this page only
  }
}

export async function createFilesEntry(title: string): Promise<Plus> {
  const form = new FormData();
  form.append('title', title);
  form.append('isPublic', 'false');
  return uploadForm('/api/v1/plus', form);
}

export function addFile(plusId: string, threadId: string | null, file: File, onProgress: (f: number) => void): Promise<Plus> {
  const form = new FormData();
  form.append('files', file, file.name);
  const url = threadId
    ? `/api/v1/chat/${encodeURIComponent(plusId)}/add-file?threadId=${encodeURIComponent(threadId)}`
    : `/api/v1/plus/${encodeURIComponent(plusId)}/add-file`;
  return uploadForm(url, form, onProgress);
}
