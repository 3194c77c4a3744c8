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
  'thread',
  'export',
  'retention.purge',
];

interface Filter extends DayRange {
  action: string;
  actorId: string;
}

export function AuditScreen() {
  const { me } = useSession();
  if (!isTeamAdmin(me.user.role) && !me.user.instanceAdmin) {
    return (
      <NotAllowed title="Audit log" back={{ href: '/account', label: 'Go to my account' }}>
        Only the team's owners and admins read its audit log.
      </NotAllowed>
    );
  }
  return <AuditLog />;
}

function AuditLog() {
  const { me } = useSession();
  const users = useLoad(() => data(api.GET('/api/v1/users')), []);
  const userName = (id: number | null) => (id === null ? 'System' : (users.value?.find((u) => u.id === id)?.name ?? `User ${id}`));
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
        <h1>Audit log</h1>
        <a class="button" href={`/api/v1/audit/csv?${csv.toString()}`} download="audit.csv">
          Download CSV
        </a>
      </div>
      <p class="muted small">{me.user.instanceAdmin ? 'Every team of this server.' : 'Who did what in the team.'} Entries are never changed or removed.</p>
      <FilterBar
        label="Filter the audit log"
        draft={draft}
        onDraft={setDraft}
        submit="Apply"
        onApply={(f) => {
          setPage(0);
          setFilter(f);
        }}
      >
        <label>
          Action
          <select aria-label="Action" value={draft.action} onChange={(e) => setDraft({ ...draft, action: e.currentTarget.value })}>
            <option value="">All actions</option>
            {ACTIONS.map((a) => (
              <option key={a} value={a}>
                {a.includes('.') ? a : `${a}.*`}
              </option>
            ))}
          </select>
        </label>
        <label>
          Actor
          <select aria-label="Actor" value={draft.actorId} onChange={(e) => setDraft({ ...draft, actorId: e.currentTarget.value })}>
            <option value="">Anyone</option>
            {(users.value ?? []).map((u) => (
              <option key={u.id} value={String(u.id)}>
                {u.name}
              </option>
            ))}
          </select>
        </label>
      </FilterBar>
      <ErrorNote error={entries.error} />
      {entries.loading && !p && <p aria-busy="true">Loading…</p>}
      {p && p.empty && <p class="muted">No entry matches.</p>}
      {p && !p.empty && (
        <>
          <TableWrap label="Audit log">
            <table class="table" aria-label="Audit log">
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">Actor</th>
                  <th scope="col">Action</th>
                  <th scope="col">Target</th>
                  <th scope="col">Outcome</th>
                  <th scope="col">Details</th>
                </tr>
              </thead>
              <tbody>
                {p.content.map((e) => (
                  <Row key={e.id} entry={e} actor={userName(e.actor.userId)} />
                ))}
              </tbody>
            </table>
          </TableWrap>
          <Pager page={p} what="entries" onStep={(d) => setPage(page + d)} />
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
        {e.actor.apiKeyId && <span class="muted small"> · API key</span>}
      </td>
      <td>
        <code>{e.action}</code>
      </td>
      <td>{e.target ? `${e.target.type} ${e.target.id}` : '—'}</td>
      <td>
        <span class={`badge status-${e.outcome === 'success' ? 'ok' : 'error'}`}>{e.outcome}</span>
      </td>
      <td class="small">{details || '—'}</td>
    </tr>
  );
}
