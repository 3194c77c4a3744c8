/**
 * "Share" on an open thread: a dialog that makes a read-only link to the thread as it reads now
 * (anyone with the link reads it without signing in), copies it, shares it again as it reads now,
 * or revokes it (the link then answers "not found" at once).
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError, data } from '../../api/client';
import { CopyButton } from '../../components/CopyButton';
import { Icon } from '../../components/Icon';
import { formatDate } from '../../components/format';
import { ErrorNote } from '../../components/Problem';
import { t } from '../../i18n';

type Share = { url: string; token: string; created: string };

export function ShareButton({ workspaceId, threadId }: { workspaceId: string; threadId: string }) {
  const [open, setOpen] = useState(false);
  const button = useRef<HTMLButtonElement>(null);
  useEffect(() => setOpen(false), [threadId]);
  return (
    <>
      <button type="button" class="ghost" ref={button} aria-haspopup="dialog" onClick={() => setOpen(true)}>
        {t('share.button')}
      </button>
      {open && (
        <ShareDialog
          workspaceId={workspaceId}
          threadId={threadId}
          onClose={() => {
            setOpen(false);
            button.current?.focus();
          }}
        />
      )}
    </>
  );
}

function ShareDialog({ workspaceId, threadId, onClose }: { workspaceId: string; threadId: string; onClose: () => void }) {
  const ref = useRef<HTMLDialogElement>(null);
  // undefined: loading; null: not shared
  const [share, setShare] = useState<Share | null | undefined>(undefined);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const path = { workspaceId, threadId };

  useEffect(() => {
    ref.current?.showModal();
    data(api.GET('/api/v1/chat/{workspaceId}/history/{threadId}/share', { params: { path } })).then(setShare, (e: unknown) =>
      // 404: not shared (yet)
      e instanceof ApiError && e.problem.status === 404 ? setShare(null) : setError(e),
    );
  }, [workspaceId, threadId]);

  const run = (p: Promise<unknown>) => {
    setBusy(true);
    setError(null);
    p.catch(setError).finally(() => setBusy(false));
  };
  const create = () => run(data(api.POST('/api/v1/chat/{workspaceId}/history/{threadId}/share', { params: { path } })).then(setShare));
  const revoke = () => run(data(api.DELETE('/api/v1/chat/{workspaceId}/history/{threadId}/share', { params: { path } })).then(() => setShare(null)));

  return (
    <dialog ref={ref} class="share-dialog" aria-labelledby="share-title" onClose={onClose}>
      <header>
        <h2 id="share-title">{t('share.title')}</h2>
        <button type="button" class="icon-button" aria-label={t('common.close')} onClick={() => ref.current?.close()}>
          <Icon name="close" />
        </button>
      </header>
      <ErrorNote error={error} />
      {share === undefined && !error && <p aria-busy="true">{t('common.loading')}</p>}
      {share === null && (
        <>
          <p>{t('share.intro')}</p>
          <button type="button" onClick={create} disabled={busy}>
            {t('share.create')}
          </button>
        </>
      )}
      {share && (
        <>
          <p class="small muted">{t('share.shared', { when: formatDate(share.created) })}</p>
          <div class="share-link">
            <input type="text" readOnly value={share.url} aria-label={t('share.link')} onFocus={(e) => e.currentTarget.select()} />
            <CopyButton text={share.url} what={t('share.linkLower')} />
          </div>
          <div class="share-buttons">
            <button type="button" class="ghost small" onClick={create} disabled={busy}>
              {t('share.update')}
            </button>
            <button type="button" class="ghost small danger" onClick={revoke} disabled={busy}>
              {t('share.revoke')}
            </button>
          </div>
        </>
      )}
    </dialog>
  );
}
