/** Team owner/admin: whether chats may be shared by link (turning it off revokes every link at once). */
import { useState } from 'preact/hooks';
import { api, data } from '../../api/client';
import { ErrorNote } from '../../components/Problem';
import { useLoad } from '../../components/useLoad';
import { t } from '../../i18n';

export function SharingSetting() {
  const sharing = useLoad(() => data(api.GET('/api/v1/chat/sharing')), []);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  // what was just chosen, shown while it is saved (the box follows the click at once)
  const [chosen, setChosen] = useState<boolean | null>(null);
  const set = (enabled: boolean) => {
    setBusy(true);
    setError(null);
    setChosen(enabled);
    data(api.PUT('/api/v1/chat/sharing', { body: { enabled } }))
      .then(sharing.reload, (e: unknown) => {
        setError(e);
        setChosen(null);
      })
      .finally(() => setBusy(false));
  };
  return (
    <section class="card stack" aria-labelledby="sharing-title">
      <h2 id="sharing-title">{t('sharing.title')}</h2>
      <ErrorNote error={sharing.error ?? error} />
      {sharing.value && (
        <label class="check">
          <input type="checkbox" checked={chosen ?? sharing.value.enabled} disabled={busy} onChange={(e) => set(e.currentTarget.checked)} />
          {t('sharing.allow')}
        </label>
      )}
      <p class="muted small">{t('sharing.hint')}</p>
    </section>
  );
}
