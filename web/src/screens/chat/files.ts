/**
 * Files attached in a chat go into a private Plus entry of that chat ("Files of a chat"): the
 * entry is created at the first attachment, each file is added with its own request (so each has
 * its own progress and its own refusal), through the chat's add-file with the thread once the
 * thread exists. The entry is also chosen as context for the chat's turns (a new chat has no
 * thread to link files to yet). Which entries a thread draws on is remembered in this browser.
 */
import { useRef, useState } from 'preact/hooks';
import { messageOf, type Plus } from '../../api/client';
import { uploadForm } from '../../api/upload';
import type { Upload } from './Composer';
import { t } from '../../i18n';

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

let uploadKeys = 0;

/**
 * The chat screen's files and Plus entries: which entries its turns draw on, the uploads in
 * progress, and the chat's own files entry (created at the first attachment). `currentThread`
 * is the thread shown when a step needs it (none yet in a new chat).
 */
export function useChatFiles(workspaceName: string | undefined, currentThread: () => string | null) {
  const [selectedPlus, setSelectedPlus] = useState<string[]>([]);
  const [uploads, setUploads] = useState<Upload[]>([]);
  const filesPlus = useRef<Promise<string> | null>(null);

  /** Another thread is shown: the entries it draws on as this browser remembers them, no uploads. */
  const openThread = (threadId: string | null) => {
    const memory = rememberedPlus(threadId);
    setSelectedPlus(memory.plusIds);
    filesPlus.current = memory.filesPlusId ? Promise.resolve(memory.filesPlusId) : null;
    setUploads([]);
  };

  /** A new chat's first answer named its thread: remember what it drew on. */
  const rememberFor = (threadId: string, plusIds: string[]) => {
    if (filesPlus.current) void filesPlus.current.then((id) => rememberPlus(threadId, { plusIds, filesPlusId: id }));
    else rememberPlus(threadId, { plusIds, filesPlusId: null });
  };

  const onFiles = (files: File[]) => {
    const batch: Upload[] = files.map((f) => ({ id: `u-${++uploadKeys}`, name: f.name, progress: 0, state: 'uploading' }));
    setUploads((u) => [...u, ...batch]);
    const patch = (id: string, p: Partial<Upload>) => setUploads((u) => u.map((x) => (x.id === id ? { ...x, ...p } : x)));
    if (!filesPlus.current) {
      filesPlus.current = createFilesEntry(t('files.entryTitle', { name: workspaceName ?? t('files.aWorkspace') })).then((e) => {
        setSelectedPlus((s) => (s.includes(e.id) ? s : [...s, e.id]));
        const t = currentThread();
        if (t) rememberPlus(t, { plusIds: [...selectedPlus, e.id], filesPlusId: e.id });
        return e.id;
      });
      filesPlus.current.catch(() => (filesPlus.current = null));
    }
    const entry = filesPlus.current;
    files.forEach((file, i) => {
      const u = batch[i]!;
      entry
        .then((plusId) => addFile(plusId, currentThread(), file, (f) => patch(u.id, { progress: f })))
        .then(
          () => patch(u.id, { state: 'done', progress: 1 }),
          (err: unknown) => patch(u.id, { state: 'failed', message: `${file.name} was not added: ${messageOf(err)}` }),
        );
    });
  };

  const togglePlus = (id: string) => {
    const next = selectedPlus.includes(id) ? selectedPlus.filter((x) => x !== id) : [...selectedPlus, id];
    setSelectedPlus(next);
    const t = currentThread();
    if (t) void (filesPlus.current ?? Promise.resolve(null)).then((f) => rememberPlus(t, { plusIds: next, filesPlusId: f }));
  };

  const dismissUpload = (id: string) => setUploads((u) => u.filter((x) => x.id !== id));

  return { selectedPlus, uploads, openThread, rememberFor, onFiles, togglePlus, dismissUpload };
}
