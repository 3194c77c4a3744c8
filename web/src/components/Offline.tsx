/** What the app shows when it opened without a connection to its server (the kept shell). */
import { useEffect } from 'preact/hooks';
import { t } from '../i18n';

export function Offline() {
  // Back online: start again, as if opened now.
  useEffect(() => {
    const reload = () => window.location.reload();
    window.addEventListener('online', reload);
    return () => window.removeEventListener('online', reload);
  }, []);
  return (
    <main class="signin" aria-labelledby="offline-title">
      <div class="notice">
        <h1 id="offline-title">{t('offline.title')}</h1>
        <p>{t('offline.body')}</p>
        <button type="button" onClick={() => window.location.reload()}>
          {t('common.tryAgain')}
        </button>
      </div>
    </main>
  );
}
