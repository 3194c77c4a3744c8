/**
 * One document set: its files (type, size, token size), each file's chunks, download of the
 * original, uploads, deletion with confirmation, the "test a question" box and the evaluation
 * set. Who may change it (its creator, a team owner/admin) sees the controls; others read it.
 */
import '../../components/admin.css';
import { useState } from 'preact/hooks';
import { api, data, type Plus } from '../../api/client';
import { ConfirmButton } from '../../components/ConfirmButton';
import { formatBytes, formatDate, formatNumber, isTeamAdmin } from '../../components/format';
import { Link } from '../../components/Link';
import { ErrorNote } from '../../components/Problem';
import { useLoad } from '../../components/useLoad';
import { navigate } from '../../router';
import { useSession } from '../../session';
import { AskBox } from './AskBox';
import { DocumentForm } from './DocumentForm';
import { EvaluationPanel } from './EvaluationPanel';
import { UploadZone } from './UploadZone';
import { t } from '../../i18n';

type PlusFile = Plus['files'][number];

export function NewDocument() {
  return (
    <section class="page narrow">
      <h1>{t('docs.new')}</h1>
      <DocumentForm submitLabel={t('docs.create')} onSaved={(p) => navigate(`/documents/${p.id}`, { replace: true })} onCancel={() => navigate('/documents')} />
    </section>
  );
}

export function DocumentScreen({ plusId }: { plusId: string }) {
  const { me } = useSession();
  const entry = useLoad(() => data(api.GET('/api/v1/plus/{plusId}', { params: { path: { plusId } } })), [plusId]);
  const [editing, setEditing] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const p = entry.value;
  if (entry.error && !p)
    return (
      <section class="page">
        <ErrorNote error={entry.error} />
        <Link href="/documents">{t('docs.back')}</Link>
      </section>
    );
  if (!p)
    return (
      <p class="loading" aria-busy="true">
        {t('common.loading')}
      </p>
    );
  const canChange = p.userId === me.user.id || isTeamAdmin(me.user.role);
  const totalTokens = p.files.reduce((n, f) => n + f.tokenSize, 0);

  return (
    <section class="page stack">
      <div class="page-head">
        <div>
          <Link href="/documents" class="small">
            ← {t('nav.documents')}
          </Link>
          <h1>{p.title || t('common.untitled')}</h1>
        </div>
        {canChange && !editing && (
          <div class="actions">
            <button type="button" class="small-button" onClick={() => setEditing(true)}>
              {t('docs.editDetails')}
            </button>
            <ConfirmButton
              label={t('common.delete')}
              what={t('docs.setWhat', { title: p.title || t('common.untitled') })}
              onConfirm={() =>
                data(api.DELETE('/api/v1/plus/{plusId}', { params: { path: { plusId } } })).then(() => navigate('/documents', { replace: true }), setError)
              }
            />
          </div>
        )}
      </div>
      <ErrorNote error={error} />
      {editing ? (
        <div class="card">
          <DocumentForm
            initial={p}
            submitLabel={t('common.save')}
            onSaved={(saved) => {
              entry.set(saved);
              setEditing(false);
            }}
            onCancel={() => setEditing(false)}
          />
        </div>
      ) : (
        <div class="card stack-tight">
          <p>{p.description || <span class="muted">{t('docs.noDescription')}</span>}</p>
          <p class="muted small">
            {p.isPublic ? t('docs.public') : t('docs.private')} · {t('account.createdOn', { when: formatDate(p.created) })} ·{' '}
            {t('docs.files', { count: p.files.length })}, {t('docs.tokens', { tokens: formatNumber(totalTokens) })}
          </p>
          {p.context && (
            <details>
              <summary>{t('docs.contextText')}</summary>
              <pre class="context-text">{p.context}</pre>
            </details>
          )}
        </div>
      )}

      {canChange && (
        <section aria-labelledby="upload-title" class="stack">
          <h2 id="upload-title">{t('docs.addFiles')}</h2>
          <UploadZone plusId={p.id} onUploaded={(updated) => entry.set(updated)} />
        </section>
      )}

      <section aria-labelledby="files-title" class="stack">
        <h2 id="files-title">{t('docs.filesTitle')}</h2>
        {p.files.length === 0 ? (
          <p class="muted">{t('docs.noFile')}</p>
        ) : (
          <ul class="file-list" aria-label={t('docs.filesTitle')}>
            {p.files.map((f) => (
              <FileRow
                key={f.id}
                file={f}
                canChange={canChange}
                onDelete={() =>
                  data(api.DELETE('/api/v1/plus/file/{fileId}', { params: { path: { fileId: f.id } } })).then(
                    () => entry.set({ ...p, files: p.files.filter((x) => x.id !== f.id) }),
                    setError,
                  )
                }
              />
            ))}
          </ul>
        )}
      </section>

      <AskBox plusId={p.id} />

      <EvaluationPanel plusId={p.id} />
    </section>
  );
}

function FileRow({ file, canChange, onDelete }: { file: PlusFile; canChange: boolean; onDelete: () => Promise<unknown> }) {
  const [open, setOpen] = useState(false);
  return (
    <li class="card file-row">
      <div class="file-head">
        <div class="file-meta">
          <strong class="file-name">
            {file.filename}{' '}
            {file.ocr && (
              <span class="badge" title={t('docs.ocrTitle')}>
                OCR<span class="visually-hidden"> {t('docs.ocrHidden')}</span>
              </span>
            )}
          </strong>
          <span class="muted small">
            {file.mimeType} · {formatBytes(file.bytes)} · {t('docs.tokens', { tokens: formatNumber(file.tokenSize) })} ·{' '}
            {t('docs.chunkCount', { count: file.fileChunks.length })}
          </span>
        </div>
        <div class="actions">
          <button
            type="button"
            class="small-button"
            aria-expanded={open}
            aria-label={open ? t('docs.hideChunksOf', { name: file.filename }) : t('docs.showChunksOf', { name: file.filename })}
            onClick={() => setOpen(!open)}
          >
            {open ? t('docs.hideChunks') : t('docs.chunks')}
          </button>
          <a
            class="button small-button"
            href={`/api/v1/plus/file/${file.id}/content`}
            download={file.filename}
            aria-label={t('docs.downloadName', { name: file.filename })}
          >
            {t('docs.download')}
          </a>
          {canChange && <ConfirmButton label={t('common.delete')} what={file.filename} onConfirm={onDelete} />}
        </div>
      </div>
      {file.summary && <p class="small">{file.summary}</p>}
      {open && (
        <ol class="chunks" aria-label={t('docs.chunksOf', { name: file.filename })}>
          {file.fileChunks.map((c, i) => (
            <li key={c.id} class="chunk">
              <span class="muted small">
                {t('docs.chunkOf', { n: i + 1, count: file.fileChunks.length })} · {t('docs.tokens', { tokens: formatNumber(c.tokenSize) })}
              </span>
              <pre>{c.fileData}</pre>
            </li>
          ))}
        </ol>
      )}
    </li>
  );
}
