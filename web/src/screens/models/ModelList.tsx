/**
 * Models: the team's own models and the instance's system models. Owners/admins add system models
 * to the team or remove them, create and edit team models and test connections; the instance admin
 * also creates and edits system models, and owners/admins choose the team's embedding model.
 * Members see the lists only.
 */
import '../../components/admin.css';
import { useState } from 'preact/hooks';
import { api, data, type Model } from '../../api/client';
import { formatNumber, isTeamAdmin } from '../../components/format';
import { Link } from '../../components/Link';
import { ErrorNote } from '../../components/Problem';
import { useLoad } from '../../components/useLoad';
import { useSession } from '../../session';
import { ConnectionTest } from './ConnectionTest';
import { EmbeddingSetting } from './EmbeddingSetting';
import { t } from '../../i18n';

export function ModelList() {
  const { me } = useSession();
  const admin = isTeamAdmin(me.user.role);
  const list = useLoad(() => data(api.GET('/api/v1/models/all', { params: { query: { includeSystem: true } } })), []);
  const [error, setError] = useState<unknown>(null);
  const team = list.value?.filter((m) => !m.system) ?? [];
  const system = list.value?.filter((m) => m.system) ?? [];

  const membership = (m: Model, add: boolean) =>
    data(api.POST(add ? '/api/v1/models/add-to-team' : '/api/v1/models/remove-from-team', { body: { id: m.id } })).then(list.reload, setError);

  return (
    <section class="page stack">
      <div class="page-head">
        <h1>{t('nav.models')}</h1>
        {admin && (
          <div class="actions">
            <Link href="/models/new" class="button primary">
              {t('model.new')}
            </Link>
            {me.user.instanceAdmin && (
              <Link href="/models/new?system=true" class="button">
                {t('model.newSystem')}
              </Link>
            )}
          </div>
        )}
      </div>
      <ErrorNote error={list.error ?? error} />
      {list.loading && !list.value && <p aria-busy="true">{t('common.loading')}</p>}
      {list.value && (
        <>
          <section aria-labelledby="team-models" class="stack">
            <h2 id="team-models">{t('model.team')}</h2>
            {team.length === 0 && <p class="muted">{t('model.teamNone')}</p>}
            <ul class="model-list" aria-label={t('model.team')}>
              {team.map((m) => (
                <ModelRow key={m.id} model={m} canEdit={admin} canTest={admin} />
              ))}
            </ul>
          </section>
          <section aria-labelledby="system-models" class="stack">
            <h2 id="system-models">{t('model.system')}</h2>
            <p class="muted small">{t('model.systemHint')}</p>
            {system.length === 0 && <p class="muted">{t('model.systemNone')}</p>}
            <ul class="model-list" aria-label={t('model.system')}>
              {system.map((m) => (
                <ModelRow
                  key={m.id}
                  model={m}
                  canEdit={me.user.instanceAdmin}
                  canTest={admin}
                  membership={
                    admin ? (
                      <button
                        type="button"
                        class="small-button"
                        aria-label={m.inTeam ? t('model.removeNamed', { name: m.name }) : t('model.addNamed', { name: m.name })}
                        onClick={() => void membership(m, !m.inTeam)}
                      >
                        {m.inTeam ? t('model.remove') : t('model.add')}
                      </button>
                    ) : null
                  }
                />
              ))}
            </ul>
          </section>
          <EmbeddingSetting models={list.value} canChoose={admin} />
        </>
      )}
    </section>
  );
}

function ModelRow({ model: m, canEdit, canTest, membership }: { model: Model; canEdit: boolean; canTest: boolean; membership?: preact.ComponentChildren }) {
  const [testing, setTesting] = useState(false);
  return (
    <li class="card model-row">
      <div class="file-head">
        <div class="file-meta">
          <strong>
            {m.name} {m.kind !== 'chat' && <span class="badge">{m.kind}</span>} {!m.active && <span class="badge">{t('model.inactive')}</span>}{' '}
            {m.system && <span class="badge">{m.inTeam ? t('model.inTeam') : t('model.notInTeam')}</span>}
          </strong>
          <span class="muted small">
            {m.apiBase}
            {m.connectionType === 'AZURE' ? ' (Azure)' : ''} · {m.baseModel ?? t('model.noBase')} ·{' '}
            {t('model.windowOf', { tokens: formatNumber(m.contextWindowUsed) })}
            {m.contextWindowSource === 'probed' ? ` ${t('model.reported')}` : m.contextWindowSource === 'default' ? ` ${t('model.defaultWindow')}` : ''} ·{' '}
            {m.chatCredits ? t('model.price', { count: m.chatCredits }) : t('model.free')}
          </span>
        </div>
        <div class="actions">
          {membership}
          {canTest && (
            <button
              type="button"
              class="small-button"
              aria-expanded={testing}
              aria-label={t('model.testOf', { name: m.name })}
              onClick={() => setTesting(!testing)}
            >
              {t('model.test')}
            </button>
          )}
          {canEdit && (
            <Link href={`/models/${m.id}/edit`} class="button small-button" aria-label={t('common.editWhat', { name: m.name })}>
              {t('common.edit')}
            </Link>
          )}
        </div>
      </div>
      {testing && <ConnectionTest model={m} />}
    </li>
  );
}
