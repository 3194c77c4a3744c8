/**
 * The one multipart upload of the web app (the documents library and the chat's files): progress
 * through XMLHttpRequest (fetch cannot report upload progress), the same cookie and the same
 * problem handling as the typed client — a refusal rejects with an ApiError carrying the server's
 * problem (413, 415, 400 …), a cut connection with a status-0 one.
 */
import { networkProblem, raise, type Plus, type Problem } from './client';
import { t } from '../i18n';

export function uploadForm(url: string, form: FormData, onProgress?: (fraction: number) => void, signal?: AbortSignal): Promise<Plus> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', url);
    xhr.withCredentials = true;
    xhr.responseType = 'json';
    xhr.upload.onprogress = (e) => {
      if (e.lengthComputable && e.total > 0 && onProgress) onProgress(e.loaded / e.total);
    };
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status < 300) return resolve(xhr.response as Plus);
      const body = xhr.response as Partial<Problem> | null;
      const problem: Problem =
        body && typeof body.status === 'number' && typeof body.code === 'string'
          ? (body as Problem)
          : { type: 'about:blank', title: t('upload.failed'), status: xhr.status, detail: t('net.status', { status: String(xhr.status) }), code: 'http_error' };
      try {
        raise(problem);
      } catch (err) {
        reject(err);
      }
    };
    xhr.onerror = () => {
      try {
        raise(networkProblem(t('upload.interrupted')));
      } catch (err) {
        reject(err);
      }
    };
    xhr.onabort = () => reject(new DOMException('Upload cancelled', 'AbortError'));
    signal?.addEventListener('abort', () => xhr.abort());
    xhr.send(form);
  });
}
