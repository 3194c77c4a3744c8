/**
 * The audit log (owners/admins; the instance admin sees every team): who did what and when,
 * filtered by action, actor and days, paged, and the same filter as a CSV download.
 */
import '../../components/admin.css';
import { useState } from 'preact/hooks';
import { api, data, type Schemas } from '../../api/client';
import { FilterBar, isoRange, type DayRange } from '../../components/FilterBar';
import { formatDate, isTeamAdmin } from '../../components/format';
import { NotAllowed } from '../../components/NotAllowed';
import { ErrorNote } from '../../components/Problem';
import { TableWrap } from '../../components/TableWrap';
import { useLoad } from '../../components/useLoad';
import { Pager } from '../../components/Pager';
import { useSession } from '../../session';
import { t, type Key } from '../../i18n';
import { en } from '../../i18n/en';

type Entry = Schemas['AuditEntry'];

/** The actions offered in the filter: whole resources first, then each action. */
const ACTIONS = [
  'auth',
  'auth.login',
  'auth.login_failed',
  'auth.logout',
  'user',
  'apikey',
  'team',
  'model',
  'workspace',
  'plus',
  'budget',
  'mcp',
  'share',
  'thread',
  'export',
  'retention',
  'scim',
];

/**
 * An action, a resource's actions, an outcome or a target in the person's words; a code the app
 * has no words for (a newer server) is shown as it is.
 */
function words(key: string, fallback: string): string {
  return key in en ? t(key as Key) : fallback;
}
const actionWords = (a: string) => (a.includes('.') ? words(`audit.act.${a}`, a) : words(`audit.group.${a}`, `${a}.*`));
const targetWords = (target: { type: string; id: string }) => `${words(`audit.target.${target.type}`, target.type)} ${target.id}`;

interface Filter extends DayRange {
  action: string;
  actorId: string;
}

export function AuditScreen() {
  const { me } = useSession();
  if (!isTeamAdmin(me.user.role) && !me.user.instanceAdmin) {
    return (
      <NotAllowed title={t('nav.audit')} back={{ href: '/account', label: t('audit.toAccount') }}>
        {t('audit.notAllowed')}
      </NotAllowed>
    );
  }
  return <AuditLog />;
}

function AuditLog() {
  const { me } = useSession();
  const users = useLoad(() => data(api.GET('/api/v1/users')), []);
  const userName = (id: number | null) => (id === null ? t('audit.system') : (users.value?.find((u) => u.id === id)?.name ?? t('audit.user', { id })));
  const [draft, setDraft] = useState<Filter>({ from: '', to: '', action: '', actorId: '' });
  const [filter, setFilter] = useState<Filter>(draft);
  const [page, setPage] = useState(0);
  const query = (f: Filter) => {
    const { from, to } = isoRange(f);
    return {
      ...(from ? { from } : {}),
      ...(to ? { to } : {}),
      ...(f.action ? { action: f.action } : {}),
      ...(f.actorId ? { actorId: Number(f.actorId) } : {}),
    };
  };
  const entries = useLoad(() => data(api.GET('/api/v1/audit', { params: { query: { ...query(filter), page, size: 50 } } })), [filter, page]);
  const csv = new URLSearchParams(Object.entries(query(filter)).map(([k, v]) => [k, String(v)]));
  const p = entries.value;

  return (
    <section class="page stack wide">
      <div class="page-head">
        <h1>{t('nav.audit')}</h1>
        <a class="button" href={`/api/v1/audit/csv?${csv.toString()}`} download="audit.csv">
          {t('audit.csv')}
        </a>
      </div>
      <p class="muted small">
        {me.user.instanceAdmin ? t('audit.every') : t('audit.who')} {t('audit.never')}
      </p>
      <FilterBar
        label={t('audit.filter')}
        draft={draft}
        onDraft={setDraft}
        submit={t('audit.apply')}
        onApply={(f) => {
          setPage(0);
          setFilter(f);
        }}
      >
        <label>
          {t('audit.action')}
          <select aria-label={t('audit.action')} value={draft.action} onChange={(e) => setDraft({ ...draft, action: e.currentTarget.value })}>
            <option value="">{t('audit.allActions')}</option>
            {ACTIONS.map((a) => (
              <option key={a} value={a}>
                {actionWords(a)}
              </option>
            ))}
          </select>
        </label>
        <label>
          {t('audit.actor')}
          <select aria-label={t('audit.actor')} value={draft.actorId} onChange={(e) => setDraft({ ...draft, actorId: e.currentTarget.value })}>
            <option value="">{t('audit.anyone')}</option>
            {(users.value ?? []).map((u) => (
              <option key={u.id} value={String(u.id)}>
                {u.name}
              </option>
            ))}
          </select>
        </label>
      </FilterBar>
      <ErrorNote error={entries.error} />
      {entries.loading && !p && <p aria-busy="true">{t('common.loading')}</p>}
      {p && p.empty && <p class="muted">{t('audit.none')}</p>}
      {p && !p.empty && (
        <>
          <TableWrap label={t('nav.audit')}>
            <table class="table" aria-label={t('nav.audit')}>
              <thead>
                <tr>
                  <th scope="col">{t('audit.col.when')}</th>
                  <th scope="col">{t('audit.actor')}</th>
                  <th scope="col">{t('audit.action')}</th>
                  <th scope="col">{t('audit.col.target')}</th>
                  <th scope="col">{t('audit.col.outcome')}</th>
                  <th scope="col">{t('audit.col.details')}</th>
                </tr>
              </thead>
              <tbody>
                {p.content.map((e) => (
                  <Row key={e.id} entry={e} actor={userName(e.actor.userId)} />
                ))}
              </tbody>
            </table>
          </TableWrap>
          <Pager page={p} count={t('audit.count', { count: p.totalElements })} onStep={(d) => setPage(page + d)} />
        </>
      )}
    </section>
  );
}

function Row({ entry: e, actor }: { entry: Entry; actor: string }) {
  const details = Object.entries(e.details)
    .map(([k, v]) => `${k}: ${Array.isArray(v) ? v.join(', ') : String(v)}`)
    .join(' · ');
  return (
    <tr>
      <td>{formatDate(e.time)}</td>
      <td>
        {actor}
        {e.actor.ip && <span class="muted small"> · {e.actor.ip}</span>}
        {e.actor.apiKeyId && <span class="muted small"> · {t('model.apiKey')}</span>}
      </td>
      <td>
        {actionWords(e.action)}
        <br />
        <code class="muted small">{e.action}</code>
      </td>
      <td>{e.target ? targetWords(e.target) : '—'}</td>
      <td>
        <span class={`badge status-${e.outcome === 'success' ? 'ok' : 'error'}`}>{words(`audit.outcome.${e.outcome}`, e.outcome)}</span>
      </td>
      <td class="small">{details || '—'}</td>
    </tr>
  );
}
