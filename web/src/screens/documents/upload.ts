/**
 * One file per request to a Plus entry's add-file, so each file has its own progress bar and its
 * own answer: a rejected file (413 too large, 415 unsupported type, 400 corrupt) shows the
 * server's message and the others still go in.
 */
import type { Plus } from '../../api/client';
import { uploadForm } from '../../api/upload';
import { t } from '../../i18n';

export function uploadFile(plusId: string, file: File, onProgress: (fraction: number) => void, signal?: AbortSignal): Promise<Plus> {
  const form = new FormData();
  form.append('files', file, file.name);
  return uploadForm(`/api/v1/plus/${encodeURIComponent(plusId)}/add-file`, form, onProgress, signal);
}

/** What a person reads for a rejected file, by the status the server gave it. */
export function rejectionTitle(status: number): string {
  switch (status) {
    case 413:
      return t('upload.tooLarge');
    case 415:
      return t('upload.unsupported');
    case 400:
      return t('upload.unreadable');
    case 0:
      return t('upload.notSent');
    default:
      return t('upload.rejected');
  }
}
