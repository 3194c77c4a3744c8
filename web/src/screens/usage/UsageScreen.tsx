/**
 * Usage: requests, tokens and credits by day, user, model, workspace or API key over a date range
 * (owners/admins: the team; members: their own, as the API decides), my spend, the budgets that
 * apply, and (owners/admins) budgets: add, change the limits in place, delete.
 */
import '../../components/admin.css';
import { useState } from 'preact/hooks';
import { api, data, type Schemas } from '../../api/client';
import { ConfirmButton } from '../../components/ConfirmButton';
import { FilterBar, isoRange, type DayRange } from '../../components/FilterBar';
import { formatDate, formatNumber, isTeamAdmin } from '../../components/format';
import { ErrorNote } from '../../components/Problem';
import { TableWrap } from '../../components/TableWrap';
import { useLoad } from '../../components/useLoad';
import { useSubmit } from '../../components/useSubmit';
import { useSession } from '../../session';

type Budget = Schemas['Budget'];
type User = Schemas['User'];
type GroupBy = 'day' | 'user' | 'model' | 'workspace' | 'apiKey';
interface Filter extends DayRange {
  groupBy: GroupBy;
}
const GROUPS: Array<[GroupBy, string]> = [
  ['day', 'Day'],
  ['user', 'User'],
  ['model', 'Model'],
  ['workspace', 'Workspace'],
  ['apiKey', 'API key'],
];
const PERIODS: Record<Budget['period'], string> = { day: 'Day', month: 'Month', total: 'Total (never resets)' };
const credits = (n: number | null) => (n == null ? '—' : n.toLocaleString('en-US', { maximumFractionDigits: 2 }));
/** A budget's two limits as typed: '' is no such limit. */
interface Limits {
  credits: string;
  rpm: string;
}
/** A number field's value as a limit: '' is no limit. */
const limit = (v: string): number | null => (v.trim() === '' ? null : Number(v));

export function UsageScreen() {
  const { me } = useSession();
  const admin = isTeamAdmin(me.user.role);
  const [draft, setDraft] = useState<Filter>({ from: '', to: '', groupBy: 'day' });
  const [q, setQ] = useState(draft);
  const query = { ...isoRange(q), groupBy: q.groupBy };
  const rows = useLoad(() => data(api.GET('/api/v1/usage', { params: { query } })), [q]);
  const mine = useLoad(() => data(api.GET('/api/v1/me/usage')), []);
  const names = useLoad(() => data(api.GET('/api/v1/models/all', { params: { query: { includeSystem: true } } })), []);
  const users = useLoad(() => (admin ? data(api.GET('/api/v1/users')) : Promise.resolve([])), [admin]);
  const workspaces = useLoad(() => (q.groupBy === 'workspace' ? data(api.GET('/api/v1/workspaces')) : Promise.resolve([])), [q.groupBy]);
  const keys = useLoad(() => (q.groupBy === 'apiKey' ? data(api.GET('/api/v1/api-keys')) : Promise.resolve([])), [q.groupBy]);
  // Names, never raw ids: what is gone (or not the caller's to see) says so in words.
  const label = (key: string | null): string => {
    if (key === null) return q.groupBy === 'apiKey' ? 'signed-in (no key)' : '—';
    if (q.groupBy === 'model') return names.value?.find((m) => m.id === key)?.name ?? 'A deleted model';
    if (q.groupBy === 'user') return users.value?.find((u) => String(u.id) === key)?.name ?? (key === String(me.user.id) ? me.user.name : 'A removed user');
    if (q.groupBy === 'workspace') return workspaces.value?.find((w) => w.id === key)?.name ?? 'A deleted or private workspace';
    if (q.groupBy === 'apiKey') return keys.value?.find((k) => k.id === key)?.name ?? 'Another API key (not yours, or revoked)';
    return key;
  };
  const groupName = GROUPS.find(([g]) => g === q.groupBy)![1];

  return (
    <section class="page stack">
      <div class="page-head">
        <h1>Usage</h1>
        <a class="button" href={`/api/v1/usage/csv?${new URLSearchParams(query).toString()}`} download="usage.csv">
          Download CSV
        </a>
      </div>
      <p class="muted small">{admin ? 'Every call made in the team.' : 'Your own calls.'}</p>
      {mine.value && (
        <p class="muted">
          My spend: {credits(mine.value.spent.day)} credits today · {credits(mine.value.spent.month)} this month · {credits(mine.value.spent.total)} in total
        </p>
      )}
      <ErrorNote error={mine.error} />
      <FilterBar label="Usage range" draft={draft} onDraft={setDraft} onApply={setQ} submit="Show">
        <label>
          Group by
          <select aria-label="Group by" value={draft.groupBy} onChange={(e) => setDraft({ ...draft, groupBy: e.currentTarget.value as GroupBy })}>
            {GROUPS.filter(([g]) => admin || g !== 'user').map(([g, l]) => (
              <option key={g} value={g}>
                {l}
              </option>
            ))}
          </select>
        </label>
      </FilterBar>
      <ErrorNote error={rows.error} />
      {rows.loading && !rows.value && <p aria-busy="true">Loading…</p>}
      {rows.value && rows.value.length === 0 && <p class="muted">No usage in this range.</p>}
      {rows.value && rows.value.length > 0 && (
        <TableWrap label={`Usage by ${groupName.toLowerCase()}`}>
          <table class="table numbers" aria-label={`Usage by ${groupName.toLowerCase()}`}>
            <thead>
              <tr>
                <th scope="col">{groupName}</th>
                <th scope="col">Requests</th>
                <th scope="col">Prompt tokens</th>
                <th scope="col">Answer tokens</th>
                <th scope="col">Credits</th>
              </tr>
            </thead>
            <tbody>
              {rows.value.map((r) => (
                <tr key={r.key ?? 'none'}>
                  <td>{label(r.key)}</td>
                  <td>{formatNumber(r.requests)}</td>
                  <td>{formatNumber(r.promptTokens)}</td>
                  <td>{formatNumber(r.completionTokens)}</td>
                  <td>{credits(r.credits)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
      {admin ? (
        <Budgets teamId={me.team.id} users={users.value ?? []} />
      ) : (
        mine.value && <BudgetTable budgets={mine.value.budgets} users={[]} title="Budgets that apply to me" />
      )}
    </section>
  );
}

/** What a budget limits, as a person reads it ("You" for the caller's own). */
function appliesTo(b: Budget, users: User[], selfId: number): string {
  if (b.scope === 'team') return 'Whole team';
  if (b.scope === 'user' && b.scopeId === String(selfId)) return 'You';
  if (b.scope === 'user') return users.find((u) => String(u.id) === b.scopeId)?.name ?? `User ${b.scopeId}`;
  return 'One API key';
}

function BudgetTable({
  budgets,
  users,
  title,
  onDelete,
  onSaved,
}: {
  budgets: Budget[];
  users: User[];
  title: string;
  onDelete?: (b: Budget) => Promise<unknown>;
  onSaved?: () => void;
}) {
  const [editing, setEditing] = useState<string | null>(null);
  const selfId = useSession().me.user.id;
  return (
    <section class="stack" aria-label={title}>
      <h2>{title}</h2>
      {budgets.length === 0 ? (
        <p class="muted">No budget.</p>
      ) : (
        <TableWrap label={title}>
          <table class="table numbers" aria-label={title}>
            <thead>
              <tr>
                <th scope="col">Applies to</th>
                <th scope="col">Period</th>
                <th scope="col">Credits</th>
                <th scope="col">Spent</th>
                <th scope="col">Requests / min</th>
                <th scope="col">Resets</th>
                {onDelete && <th scope="col">Actions</th>}
              </tr>
            </thead>
            <tbody>
              {budgets.map((b) => {
                const what = `${appliesTo(b, users, selfId)} ${b.period} budget`;
                return editing === b.id && onSaved ? (
                  <tr key={b.id} class="editing">
                    <td colSpan={7}>
                      <BudgetEdit
                        budget={b}
                        what={what}
                        onDone={(saved) => {
                          setEditing(null);
                          if (saved) onSaved();
                        }}
                      />
                    </td>
                  </tr>
                ) : (
                  <tr key={b.id}>
                    <td>{appliesTo(b, users, selfId)}</td>
                    <td>{PERIODS[b.period]}</td>
                    <td>{credits(b.credits)}</td>
                    <td>{credits(b.spent)}</td>
                    <td>{b.requestsPerMinute ?? '—'}</td>
                    <td>{b.resetsAt ? formatDate(b.resetsAt) : 'never'}</td>
                    {onDelete && (
                      <td>
                        <div class="actions">
                          <button type="button" class="small-button" aria-label={`Edit ${what}`} onClick={() => setEditing(b.id)}>
                            Edit
                          </button>
                          <ConfirmButton label="Delete" what={what} onConfirm={() => onDelete(b)} />
                        </div>
                      </td>
                    )}
                  </tr>
                );
              })}
            </tbody>
          </table>
        </TableWrap>
      )}
    </section>
  );
}

/** A budget's limits changed in place (PATCH): an emptied field removes that limit; the server refuses to remove both. */
function BudgetEdit({ budget: b, what, onDone }: { budget: Budget; what: string; onDone: (saved: boolean) => void }) {
  const [f, setF] = useState<Limits>({
    credits: b.credits == null ? '' : String(b.credits),
    rpm: b.requestsPerMinute == null ? '' : String(b.requestsPerMinute),
  });
  const submit = useSubmit();
  return (
    <form
      class="stack"
      aria-label={`Edit ${what}`}
      onSubmit={submit.handler(() =>
        data(api.PATCH('/api/v1/budgets/{id}', { params: { path: { id: b.id } }, body: { credits: limit(f.credits), requestsPerMinute: limit(f.rpm) } })).then(
          () => onDone(true),
        ),
      )}
    >
      <p class="small">
        <strong>{what}</strong> · spent {credits(b.spent)} this period. Leave a field empty for no such limit.
      </p>
      <div class="row numbers">
        <LimitFields value={f} onChange={setF} />
      </div>
      <ErrorNote error={submit.error} />
      <div class="actions">
        <button type="submit" class="primary" disabled={submit.busy}>
          Save budget
        </button>
        <button type="button" onClick={() => onDone(false)}>
          Cancel
        </button>
      </div>
    </form>
  );
}

function LimitFields({ value: f, onChange }: { value: Limits; onChange: (l: Limits) => void }) {
  return (
    <>
      <label>
        Credits
        <input type="number" min={0} step="any" value={f.credits} onInput={(e) => onChange({ ...f, credits: e.currentTarget.value })} />
      </label>
      <label>
        Requests per minute
        <input type="number" min={1} step={1} value={f.rpm} onInput={(e) => onChange({ ...f, rpm: e.currentTarget.value })} />
      </label>
    </>
  );
}

function Budgets({ teamId, users }: { teamId: string; users: User[] }) {
  const budgets = useLoad(() => data(api.GET('/api/v1/budgets')), []);
  const [f, setF] = useState({ scope: 'team' as Budget['scope'], scopeId: '', period: 'month' as Budget['period'], credits: '', rpm: '' });
  const submit = useSubmit();
  return (
    <>
      <ErrorNote error={budgets.error} />
      {budgets.value && (
        <BudgetTable
          budgets={budgets.value}
          users={users}
          title="Budgets"
          onSaved={budgets.reload}
          onDelete={(b) => data(api.DELETE('/api/v1/budgets/{id}', { params: { path: { id: b.id } } })).then(budgets.reload, submit.setError)}
        />
      )}
      <section class="card stack" aria-labelledby="budget-title">
        <h2 id="budget-title">New budget</h2>
        <form
          class="stack"
          aria-labelledby="budget-title"
          onSubmit={submit.handler(() => {
            const scopeId = f.scope === 'team' ? teamId : f.scope === 'user' ? Number(f.scopeId) : f.scopeId.trim();
            return data(
              api.POST('/api/v1/budgets', { body: { scope: f.scope, scopeId, period: f.period, credits: limit(f.credits), requestsPerMinute: limit(f.rpm) } }),
            ).then(() => {
              setF({ ...f, credits: '', rpm: '' });
              budgets.reload();
            });
          })}
        >
          <div class="row">
            <label>
              Applies to
              <select aria-label="Applies to" value={f.scope} onChange={(e) => setF({ ...f, scope: e.currentTarget.value as Budget['scope'], scopeId: '' })}>
                <option value="team">The whole team</option>
                <option value="user">One user</option>
                <option value="apiKey">One API key</option>
              </select>
            </label>
            {f.scope === 'user' && (
              <label>
                User
                <select aria-label="User" value={f.scopeId} required onChange={(e) => setF({ ...f, scopeId: e.currentTarget.value })}>
                  <option value="">Choose…</option>
                  {users.map((u) => (
                    <option key={u.id} value={u.id}>
                      {u.name} ({u.email})
                    </option>
                  ))}
                </select>
              </label>
            )}
            {f.scope === 'apiKey' && (
              <label>
                API key id
                <input value={f.scopeId} required maxLength={64} onInput={(e) => setF({ ...f, scopeId: e.currentTarget.value })} />
              </label>
            )}
            <label>
              Period
              <select aria-label="Period" value={f.period} onChange={(e) => setF({ ...f, period: e.currentTarget.value as Budget['period'] })}>
                {Object.entries(PERIODS).map(([p, l]) => (
                  <option key={p} value={p}>
                    {l}
                  </option>
                ))}
              </select>
            </label>
            <LimitFields value={f} onChange={(l) => setF({ ...f, ...l })} />
          </div>
          <p class="hint">Set credits, requests per minute, or both.</p>
          <ErrorNote error={submit.error} />
          <div class="actions">
            <button type="submit" class="primary" disabled={submit.busy}>
              Add budget
            </button>
          </div>
        </form>
      </section>
    </>
  );
}
