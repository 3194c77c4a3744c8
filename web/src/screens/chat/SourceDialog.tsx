/** The chunk behind a source, read from its Plus entry, in a modal dialog. */
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, data, type Source } from '../../api/client';
import { Icon } from '../../components/Icon';
import { ErrorNote } from '../../components/Problem';
import { formatDecimal } from '../../components/format';
import { t } from '../../i18n';

export function SourceDialog({ source, onClose }: { source: Source; onClose: () => void }) {
  const ref = useRef<HTMLDialogElement>(null);
  const [text, setText] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);

  useEffect(() => {
    ref.current?.showModal();
    data(api.GET('/api/v1/plus/{plusId}', { params: { path: { plusId: source.plusId } } })).then((plus) => {
      if (source.chunkId === null) return setText(plus.context ?? source.excerpt);
      const chunk = plus.files.find((f) => f.id === source.fileId)?.fileChunks.find((c) => c.id === source.chunkId);
      setText(chunk ? chunk.fileData : null);
      if (!chunk) setError(new Error(t('sources.gone')));
    }, setError);
  }, [source]);

  return (
    <dialog ref={ref} class="source-dialog" aria-labelledby="source-title" onClose={onClose}>
      <header>
        <h2 id="source-title">{source.filename ?? t('sources.entryContext')}</h2>
        <button type="button" class="icon-button" aria-label={t('common.close')} onClick={() => ref.current?.close()}>
          <Icon name="close" />
        </button>
      </header>
      <p class="muted small">
        {t('sources.scoreOf', { score: formatDecimal(source.score, 3) })}
        {source.chunkId !== null && ` · ${t('sources.passage', { id: source.chunkId })}`}
      </p>
      <ErrorNote error={error} />
      {text === null && !error && <p aria-busy="true">{t('common.loading')}</p>}
      {text !== null && <pre class="chunk-text">{text}</pre>}
    </dialog>
  );
}
