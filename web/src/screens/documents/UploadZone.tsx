/** Drag-and-drop or pick files; each uploads on its own with a progress bar and its own outcome. */
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError, data, messageOf, type Plus } from '../../api/client';
import { formatBytes } from '../../components/format';
import { rejectionTitle, uploadFile } from './upload';
import { t } from '../../i18n';

interface Item {
  key: number;
  name: string;
  size: number;
  progress: number;
  state: 'sending' | 'done' | 'rejected';
  status?: number;
  message?: string;
}

let nextKey = 1;

export function UploadZone({ plusId, onUploaded }: { plusId: string; onUploaded: (p: Plus) => void }) {
  const [items, setItems] = useState<Item[]>([]);
  const [over, setOver] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  // Scans are read by OCR before the server answers: while a sent file waits, ask how far it is.
  const [reading, setReading] = useState<Record<string, { pages: number; pagesRead: number }>>({});
  const waiting = items.some((i) => i.state === 'sending' && i.progress >= 1);
  useEffect(() => {
    if (!waiting) return;
    let stopped = false;
    const poll = () =>
      data(api.GET('/api/v1/plus/{plusId}/reading', { params: { path: { plusId } } })).then(
        (r) => !stopped && setReading(Object.fromEntries(r.files.map((f) => [f.filename, f]))),
        () => undefined,
      );
    void poll();
    const timer = setInterval(() => void poll(), 1000);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, [waiting, plusId]);
  const update = (key: number, patch: Partial<Item>) => setItems((list) => list.map((i) => (i.key === key ? { ...i, ...patch } : i)));

  const send = (files: FileList | File[]) => {
    const batch = [...files].map((file) => ({ file, item: { key: nextKey++, name: file.name, size: file.size, progress: 0, state: 'sending' as const } }));
    setItems((list) => [...batch.map((b) => b.item), ...list]);
    // One after another: the server ingests each file (parse, chunk, count tokens) before answering.
    void batch.reduce(
      (prev, { file, item }) =>
        prev.then(() =>
          uploadFile(plusId, file, (f) => update(item.key, { progress: f })).then(
            (plus) => {
              update(item.key, { state: 'done', progress: 1 });
              onUploaded(plus);
            },
            (err: unknown) => update(item.key, { state: 'rejected', status: err instanceof ApiError ? err.status : undefined, message: messageOf(err) }),
          ),
        ),
      Promise.resolve(),
    );
  };

  return (
    <div class="stack">
      <div
        class={`dropzone${over ? ' over' : ''}`}
        onDragOver={(e) => {
          e.preventDefault();
          setOver(true);
        }}
        onDragLeave={() => setOver(false)}
        onDrop={(e) => {
          e.preventDefault();
          setOver(false);
          if (e.dataTransfer?.files.length) send(e.dataTransfer.files);
        }}
      >
        <p>{t('upload.drop')}</p>
        <button type="button" onClick={() => input.current?.click()}>
          {t('upload.choose')}
        </button>
        <input
          ref={input}
          type="file"
          multiple
          class="visually-hidden"
          aria-label={t('upload.files')}
          tabIndex={-1}
          onChange={(e) => {
            const files = e.currentTarget.files;
            if (files?.length) send([...files]);
            e.currentTarget.value = '';
          }}
        />
        <p class="hint">{t('upload.kinds')}</p>
      </div>
      {items.length > 0 && (
        <ul class="upload-list" aria-label={t('upload.list')}>
          {items.map((i) => (
            <li key={i.key} class={`upload ${i.state}`} aria-label={t('upload.of', { name: i.name })}>
              <span class="upload-name">
                {i.name} <span class="muted">({formatBytes(i.size)})</span>
              </span>
              {i.state === 'sending' && (
                <progress max={1} value={i.progress} aria-label={t('upload.progress', { name: i.name })}>
                  {Math.round(i.progress * 100)}%
                </progress>
              )}
              {i.state === 'sending' && i.progress >= 1 && (
                <span class="muted small" aria-live="polite">
                  {reading[i.name] ? t('upload.ocr', { read: reading[i.name]!.pagesRead, pages: reading[i.name]!.pages }) : t('upload.reading')}
                </span>
              )}
              {i.state === 'done' && <span class="ok">{t('upload.added')}</span>}
              {i.state === 'rejected' && (
                <span class="error-note" role="alert">
                  <strong>{rejectionTitle(i.status ?? 0)}:</strong> {i.message}
                </span>
              )}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
