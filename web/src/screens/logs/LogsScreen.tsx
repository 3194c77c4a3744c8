/**
 * Prompt logs: date range, search, paging, sort, a row's full prompt and response, and a CSV of
 * the current filter. The API decides what is shown: owners/admins the team's logs, members their own.
 */
import '../../components/admin.css';
import { useState } from 'preact/hooks';
import { api, data, type Schemas } from '../../api/client';
import { FilterBar, isoRange, type DayRange } from '../../components/FilterBar';
import { formatDate, formatNumber, isTeamAdmin } from '../../components/format';
import { Link } from '../../components/Link';
import { ErrorNote } from '../../components/Problem';
import { TableWrap } from '../../components/TableWrap';
import { useLoad } from '../../components/useLoad';
import { Pager } from '../../components/Pager';
import { useSession } from '../../session';
import { t } from '../../i18n';

type Log = Schemas['PromptLog'];
const SORTS = [
  ['created,desc', () => t('logs.sort.newest')],
  ['created,asc', () => t('logs.sort.oldest')],
  ['latencyMs,desc', () => t('logs.sort.slowest')],
  ['promptTokens,desc', () => t('logs.sort.prompt')],
  ['completionTokens,desc', () => t('logs.sort.answer')],
  ['modelName,asc', () => t('logs.sort.model')],
  ['status,asc', () => t('logs.sort.status')],
] as const;

interface Filter extends DayRange {
  q: string;
  sort: string;
  size: number;
}

export function LogsScreen() {
  const { me } = useSession();
  const admin = isTeamAdmin(me.user.role);
  // the logs carry user ids; an owner/admin reads names (a member's logs are all their own)
  const users = useLoad(() => (admin ? data(api.GET('/api/v1/users')) : Promise.resolve([me.user])), [admin]);
  const userName = (id: number) => users.value?.find((u) => u.id === id)?.name ?? 'A removed user';
  const workspaces = useLoad(() => data(api.GET('/api/v1/workspaces')), []);
  const workspaceName = (id: string | null) => (id === null ? null : (workspaces.value?.find((w) => w.id === id)?.name ?? 'a deleted or private workspace'));
  const [draft, setDraft] = useState<Filter>({ from: '', to: '', q: '', sort: 'created,desc', size: 20 });
  const [filter, setFilter] = useState<Filter>(draft);
  const [page, setPage] = useState(0);
  const [open, setOpen] = useState<string | null>(null);
  const query = (f: Filter) => {
    const { from, to } = isoRange(f);
    return { ...(f.q.trim() ? { q: f.q.trim() } : {}), ...(from ? { startDate: from } : {}), ...(to ? { endDate: to } : {}) };
  };
  const logs = useLoad(
    () => data(api.GET('/api/v1/chat/prompt-logs/paged', { params: { query: { ...query(filter), page, size: filter.size, sort: [filter.sort] } } })),
    [filter, page],
  );
  // The CSV route takes a required range: an open end is the widest range there is.
  const csvParams = new URLSearchParams({
    startDate: new Date(0).toISOString(),
    endDate: new Date(Date.now() + 86_400_000).toISOString(),
    ...query(filter),
  });
  const p = logs.value;

  return (
    <section class="page stack wide">
      <div class="page-head">
        <h1>{t('logs.title')}</h1>
        <a class="button" href={`/api/v1/chat/prompt-logs/csv?${csvParams.toString()}`} download="prompt-logs.csv">
          {t('audit.csv')}
        </a>
      </div>
      <p class="muted small">{admin ? t('logs.every') : t('logs.own')}</p>
      <FilterBar
        label={t('logs.filter')}
        draft={draft}
        onDraft={setDraft}
        submit={t('audit.apply')}
        onApply={(f) => {
          setPage(0);
          setFilter(f);
        }}
      >
        <label class="grow">
          {t('logs.search')}
          <input
            type="search"
            value={draft.q}
            maxLength={500}
            placeholder={t('logs.searchPlaceholder')}
            onInput={(e) => setDraft({ ...draft, q: e.currentTarget.value })}
          />
        </label>
        <label>
          {t('logs.sort')}
          <select aria-label={t('logs.sort')} value={draft.sort} onChange={(e) => setDraft({ ...draft, sort: e.currentTarget.value })}>
            {SORTS.map(([v, l]) => (
              <option key={v} value={v}>
                {l()}
              </option>
            ))}
          </select>
        </label>
        <label>
          {t('logs.perPage')}
          <select aria-label={t('logs.perPage')} value={draft.size} onChange={(e) => setDraft({ ...draft, size: Number(e.currentTarget.value) })}>
            {[20, 50, 100].map((n) => (
              <option key={n} value={n}>
                {n}
              </option>
            ))}
          </select>
        </label>
      </FilterBar>
      <ErrorNote error={logs.error} />
      {logs.loading && !p && <p aria-busy="true">{t('common.loading')}</p>}
      {p && p.empty && <p class="muted">{t('logs.none')}</p>}
      {p && !p.empty && (
        <>
          <TableWrap label={t('logs.title')}>
            <table class="table logs" aria-label={t('logs.title')}>
              <thead>
                <tr>
                  <th scope="col">{t('audit.col.when')}</th>
                  <th scope="col">{t('logs.col.user')}</th>
                  <th scope="col">{t('composer.model')}</th>
                  <th scope="col">{t('library.prompt')}</th>
                  <th scope="col">{t('ask.col.tokens')}</th>
                  <th scope="col">{t('logs.col.latency')}</th>
                  <th scope="col">{t('logs.sort.status')}</th>
                </tr>
              </thead>
              <tbody>
                {p.content.map((l) => (
                  <LogRow
                    key={l.id}
                    log={l}
                    user={userName(l.userId)}
                    workspace={workspaceName(l.workspaceId)}
                    open={open === l.id}
                    onToggle={() => setOpen(open === l.id ? null : l.id)}
                  />
                ))}
              </tbody>
            </table>
          </TableWrap>
          <Pager page={p} count={t('logs.count', { count: p.totalElements })} onStep={(d) => setPage(page + d)} />
        </>
      )}
    </section>
  );
}

function LogRow({ log: l, user, workspace, open, onToggle }: { log: Log; user: string; workspace: string | null; open: boolean; onToggle: () => void }) {
  return (
    <>
      <tr class={open ? 'open' : ''}>
        <td>{formatDate(l.created)}</td>
        <td>{user}</td>
        <td>{l.modelName ?? '—'}</td>
        <td class="excerpt">
          <button type="button" class="link-button" aria-expanded={open} onClick={onToggle}>
            <span class="visually-hidden">{open ? t('logs.hideFull') : t('logs.showFull')} </span>
            {l.prompt.length > 80 ? `${l.prompt.slice(0, 80)}…` : l.prompt || t('logs.empty')}
          </button>
        </td>
        <td>
          {formatNumber(l.promptTokens)} / {formatNumber(l.completionTokens)}
        </td>
        <td>{l.latencyMs == null ? '—' : `${formatNumber(l.latencyMs)} ms`}</td>
        <td>
          <span class={`badge status-${l.status}`}>{l.status}</span>
        </td>
      </tr>
      {open && (
        <tr class="log-detail">
          <td colSpan={7}>
            <h3 class="small">{t('library.prompt')}</h3>
            <pre>{l.prompt}</pre>
            <h3 class="small">{t('logs.response')}</h3>
            <pre>{l.response ?? t('logs.none2')}</pre>
            {l.error && (
              <p class="error-note">
                <strong>{t('logs.error')}</strong> {l.error}
              </p>
            )}
            <p class="muted small">
              {user} · {t('logs.modelOf', { name: l.modelName ?? '—' })} ·{' '}
              {t('logs.tokens', { prompt: formatNumber(l.promptTokens), answer: formatNumber(l.completionTokens) })} ·{' '}
              {l.latencyMs == null ? '—' : `${formatNumber(l.latencyMs)} ms`}
              {workspace && ` · ${t('logs.workspaceOf', { name: workspace })}`}
              {l.workspaceId && l.threadId && (
                <>
                  {' · '}
                  <Link href={`/w/${l.workspaceId}/t/${l.threadId}`}>{t('logs.openChat')}</Link>
                </>
              )}
            </p>
          </td>
        </tr>
      )}
    </>
  );
}
