/**
 * One file per request to a Plus entry's add-file, through XMLHttpRequest (fetch cannot report
 * upload progress), so each file has its own progress bar and its own answer: a rejected file
 * (413 too large, 415 unsupported type, 400 corrupt) shows the server's message and the others
 * still go in.
 */
import { ApiError, networkProblem, raise, type Plus, type Problem } from '../../api/client';

export function uploadFile(plusId: string, file: File, onProgress: (fraction: number) => void, signal?: AbortSignal): Promise<Plus> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', `/api/v1/plus/${encodeURIComponent(plusId)}/add-file`);
    xhr.withCredentials = true;
    xhr.responseType = 'json';
    xhr.upload.onprogress = (e) => {
      if (e.lengthComputable && e.total > 0) onProgress(e.loaded / e.total);
    };
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status < 300) return resolve(xhr.response as Plus);
      const body = xhr.response as Partial<Problem> | null;
      const problem: Problem =
        body && typeof body.status === 'number' && typeof body.code === 'string'
          ? (body as Problem)
          : { type: 'about:blank', title: 'Upload failed', status: xhr.status, detail: `The server answered ${xhr.status}.`, code: 'http_error' };
      try {
        raise(problem);
      } catch (e) {
        reject(e as ApiError);
      }
    };
    xhr.onerror = () => reject(new ApiError(networkProblem('The upload was interrupted. Check your connection and try again.')));
    xhr.onabort = () => reject(new DOMException('Upload cancelled', 'AbortError'));
    signal?.addEventListener('abort', () => xhr.abort());
    const form = new FormData();
    form.append('files', file, file.name);
    xhr.send(form);
  });
}

/** What a person reads for a rejected file, by the status the server gave it. */
export function rejectionTitle(status: number): string {
  switch (status) {
    case 413:
      return 'Too large';
    case 415:
      return 'Unsupported type';
    case 400:
      return 'Could not be read';
    case 0:
      return 'Not sent';
    default:
      return 'Rejected';
  }
}
