/** Documents: the Plus entries the caller sees (their own and the team's public ones). */
import '../../components/admin.css';
import { api, data } from '../../api/client';
import { Link } from '../../components/Link';
import { ErrorNote } from '../../components/Problem';
import { useLoad } from '../../components/useLoad';
import { t } from '../../i18n';

export function DocumentList() {
  const list = useLoad(() => data(api.GET('/api/v1/plus', { params: { query: { showPublic: true } } })), []);
  return (
    <section class="page">
      <div class="page-head">
        <h1>{t('nav.documents')}</h1>
        <Link href="/documents/new" class="button primary">
          {t('docs.new')}
        </Link>
      </div>
      <p class="muted">{t('docs.intro')}</p>
      <ErrorNote error={list.error} />
      {list.loading && !list.value && <p aria-busy="true">{t('common.loading')}</p>}
      {list.value?.length === 0 && <p class="muted">{t('docs.none')}</p>}
      {list.value && list.value.length > 0 && (
        <ul class="cards" aria-label={t('problem.field.plusIds')}>
          {list.value.map((p) => (
            <li key={p.id} class="card">
              <Link href={`/documents/${p.id}`} class="workspace-link">
                <strong>{p.title || t('common.untitled')}</strong>
                <span class="muted">{p.description || t('docs.noDescription')}</span>
              </Link>
              <span class="badge">{p.isPublic ? t('docs.public') : t('docs.private')}</span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
