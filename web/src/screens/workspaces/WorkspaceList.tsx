/** Home: the workspaces the caller sees, each opening its chat; Edit on those they may change (their own, or any for an owner/admin). */
import { useEffect, useState } from 'preact/hooks';
import { api, data, type Workspace } from '../../api/client';
import { isTeamAdmin } from '../../components/format';
import { Link } from '../../components/Link';
import { ErrorNote } from '../../components/Problem';
import { useSession } from '../../session';
import { t } from '../../i18n';

export function WorkspaceList() {
  const { me } = useSession();
  const admin = isTeamAdmin(me.user.role);
  const [list, setList] = useState<Workspace[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    data(api.GET('/api/v1/workspaces')).then(setList, setError);
  }, []);
  return (
    <section class="page">
      <div class="page-head">
        <h1>{t('ws.title')}</h1>
        <Link href="/workspaces/new" class="button primary">
          {t('ws.new')}
        </Link>
      </div>
      <ErrorNote error={error} />
      {list === null && !error && <p aria-busy="true">{t('common.loading')}</p>}
      {list?.length === 0 && <p class="muted">{t('ws.none')}</p>}
      {list && list.length > 0 && (
        <ul class="cards" aria-label={t('ws.title')}>
          {list.map((w) => (
            <li key={w.id} class="card workspace-card">
              <Link href={`/w/${w.id}`} class="workspace-link">
                <strong>{w.name}</strong>
                <span class="muted">
                  {w.models.map((m) => m.modelName).join(', ') || t('ws.noModel')} · {w.sharingType === 'TEAM' ? t('ws.sharedTeam') : t('ws.private')}
                </span>
              </Link>
              {(admin || w.userId === me.user.id) && (
                <Link href={`/workspaces/${w.id}/edit`} class="small" aria-label={t('common.editWhat', { name: w.name })}>
                  {t('common.edit')}
                </Link>
              )}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
