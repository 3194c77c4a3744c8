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

type Log = Schemas['PromptLog'];
const SORTS = [
  ['created,desc', 'Newest first'],
  ['created,asc', 'Oldest first'],
  ['latencyMs,desc', 'Slowest first'],
  ['promptTokens,desc', 'Most prompt tokens'],
  ['completionTokens,desc', 'Most answer tokens'],
  ['modelName,asc', 'Model name'],
  ['status,asc', 'Status'],
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
        <h1>Prompt logs</h1>
        <a class="button" href={`/api/v1/chat/prompt-logs/csv?${csvParams.toString()}`} download="prompt-logs.csv">
          Download CSV
        </a>
      </div>
      <p class="muted small">{admin ? 'Every call made in the team.' : 'Your own calls.'}</p>
      <FilterBar
        label="Filter prompt logs"
        draft={draft}
        onDraft={setDraft}
        submit="Apply"
        onApply={(f) => {
          setPage(0);
          setFilter(f);
        }}
      >
        <label class="grow">
          Search
          <input
            type="search"
            value={draft.q}
            maxLength={500}
            placeholder="prompt or response text"
            onInput={(e) => setDraft({ ...draft, q: e.currentTarget.value })}
          />
        </label>
        <label>
          Sort
          <select aria-label="Sort" value={draft.sort} onChange={(e) => setDraft({ ...draft, sort: e.currentTarget.value })}>
            {SORTS.map(([v, l]) => (
              <option key={v} value={v}>
                {l}
              </option>
            ))}
          </select>
        </label>
        <label>
          Per page
          <select aria-label="Per page" value={draft.size} onChange={(e) => setDraft({ ...draft, size: Number(e.currentTarget.value) })}>
            {[20, 50, 100].map((n) => (
              <option key={n} value={n}>
                {n}
              </option>
            ))}
          </select>
        </label>
      </FilterBar>
      <ErrorNote error={logs.error} />
      {logs.loading && !p && <p aria-busy="true">Loading…</p>}
      {p && p.empty && <p class="muted">No prompt log matches.</p>}
      {p && !p.empty && (
        <>
          <TableWrap label="Prompt logs">
            <table class="table logs" aria-label="Prompt logs">
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">User</th>
                  <th scope="col">Model</th>
                  <th scope="col">Prompt</th>
                  <th scope="col">Tokens</th>
                  <th scope="col">Latency</th>
                  <th scope="col">Status</th>
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
          <Pager page={p} what="logs" onStep={(d) => setPage(page + d)} />
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
            <span class="visually-hidden">{open ? 'Hide' : 'Show'} the full prompt and response: </span>
            {l.prompt.length > 80 ? `${l.prompt.slice(0, 80)}…` : l.prompt || '(empty)'}
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
            <h3 class="small">Prompt</h3>
            <pre>{l.prompt}</pre>
            <h3 class="small">Response</h3>
            <pre>{l.response ?? '(none)'}</pre>
            {l.error && (
              <p class="error-note">
                <strong>Error:</strong> {l.error}
              </p>
            )}
            <p class="muted small">
              {user} · model {l.modelName ?? '—'} · {formatNumber(l.promptTokens)} prompt / {formatNumber(l.completionTokens)} answer tokens ·{' '}
              {l.latencyMs == null ? '—' : `${formatNumber(l.latencyMs)} ms`}
              {workspace && ` · workspace ${workspace}`}
              {l.workspaceId && l.threadId && (
                <>
                  {' · '}
                  <Link href={`/w/${l.workspaceId}/t/${l.threadId}`}>Open the chat</Link>
                </>
              )}
            </p>
          </td>
        </tr>
      )}
    </>
  );
}
