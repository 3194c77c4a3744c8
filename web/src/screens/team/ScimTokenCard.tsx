/**
 * The team's SCIM token (owner): what an identity provider uses at /scim/v2 to create, update and
 * deactivate the team's people. Shown once when made; making another replaces it.
 */
import { useState } from 'preact/hooks';
import { api, data } from '../../api/client';
import { CopyButton } from '../../components/CopyButton';
import { ErrorNote } from '../../components/Problem';
import { useSubmit } from '../../components/useSubmit';
import { t } from '../../i18n';

export function ScimTokenCard() {
  const [token, setToken] = useState<string | null>(null);
  const submit = useSubmit();
  return (
    <section class="card stack" aria-labelledby="scim-title">
      <h2 id="scim-title">{t('scim.title')}</h2>
      <p class="muted small">
        {t('scim.hint.before')} <code>{`${window.location.origin}/scim/v2`}</code> {t('scim.hint.after')}
      </p>
      <form class="actions" onSubmit={submit.handler(() => data(api.POST('/api/v1/scim/token')).then((r) => setToken(r.token)))}>
        <button type="submit" disabled={submit.busy}>
          {t('scim.create')}
        </button>
      </form>
      <ErrorNote error={submit.error} />
      {token && (
        <div class="shown-once" role="status" aria-label={t('scim.token')}>
          <p>{t('scim.copyNow')}</p>
          <p class="secret-line">
            <span>{t('scim.token')}</span> <code>{token}</code> <CopyButton text={token} what={t('scim.token')} />
          </p>
        </div>
      )}
    </section>
  );
}
