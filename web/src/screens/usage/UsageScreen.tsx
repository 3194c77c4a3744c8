/**
 * Usage: requests, tokens and credits by day, user, model, workspace or API key over a date range
 * (owners/admins: the team; members: their own, as the API decides), my spend, the budgets that
 * apply, and (owners/admins) budget editing. The usage module (CONTRACT §8) is merged separately, so
 * its calls and shapes are written here rather than generated; after that merge they can move to
 * the typed client.
 */
import '../../components/admin.css';
import { useState } from 'preact/hooks';
import { api, data, type Schemas } from '../../api/client';
import { ConfirmButton } from '../../components/ConfirmButton';
import { dayToIso, formatDate, formatNumber, isTeamAdmin } from '../../components/format';
import { sendJson } from '../../components/json';
import { ErrorNote } from '../../components/Problem';
import { useLoad } from '../../components/useLoad';
import { useSession } from '../../session';

interface Budget {
  id: string;
  scope: 'team' | 'user' | 'apiKey';
  scopeId: string;
  period: 'day' | 'month' | 'total';
  credits: number | null;
  requestsPerMinute: number | null;
  spent: number;
  remaining: number | null;
  resetsAt: string | null;
}
interface UsageRow {
  key: string | null;
  requests: number;
  promptTokens: number;
  completionTokens: number;
  credits: number;
}
interface MeUsage {
  spent: { day: number; month: number; total: number };
  budgets: Budget[];
}
type GroupBy = 'day' | 'user' | 'model' | 'workspace' | 'apiKey';
const GROUPS: Array<[GroupBy, string]> = [
  ['day', 'Day'],
  ['user', 'User'],
  ['model', 'Model'],
  ['workspace', 'Workspace'],
  ['apiKey', 'API key'],
];
const credits = (n: number | null) => (n == null ? '—' : n.toLocaleString('en-US', { maximumFractionDigits: 2 }));

export function UsageScreen() {
  const { me } = useSession();
  const admin = isTeamAdmin(me.user.role);
  const [draft, setDraft] = useState({ from: '', to: '', groupBy: 'day' as GroupBy });
  const [q, setQ] = useState(draft);
  const range = { ...(dayToIso(q.from) ? { from: dayToIso(q.from)! } : {}), ...(dayToIso(q.to, true) ? { to: dayToIso(q.to, true)! } : {}) };
  const rows = useLoad(() => sendJson<UsageRow[]>('GET', `/api/v1/usage?${new URLSearchParams({ ...range, groupBy: q.groupBy }).toString()}`), [q]);
  const mine = useLoad(() => sendJson<MeUsage>('GET', '/api/v1/me/usage'), []);
  const names = useLoad(() => (admin ? data(api.GET('/api/v1/models/all', { params: { query: { includeSystem: true } } })) : Promise.resolve([])), [admin]);
  const users = useLoad(() => (admin ? data(api.GET('/api/v1/users')) : Promise.resolve([])), [admin]);
  const label = (key: string | null): string => {
    if (key === null) return q.groupBy === 'apiKey' ? 'signed-in (no key)' : '—';
    if (q.groupBy === 'model') return names.value?.find((m) => m.id === key)?.name ?? key;
    if (q.groupBy === 'user') return users.value?.find((u) => String(u.id) === key)?.name ?? `user ${key}`;
    return key;
  };
  const csv = new URLSearchParams({ ...range, groupBy: q.groupBy });

  return (
    <section class="page stack">
      <div class="page-head">
        <h1>Usage</h1>
        <a class="button" href={`/api/v1/usage/csv?${csv.toString()}`} download="usage.csv">
          Download CSV
        </a>
      </div>
      {mine.value && (
        <p class="muted">
          My spend: {credits(mine.value.spent.day)} credits today · {credits(mine.value.spent.month)} this month · {credits(mine.value.spent.total)} in total
        </p>
      )}
      <form
        class="filters"
        aria-label="Usage range"
        onSubmit={(e) => {
          e.preventDefault();
          setQ({ ...draft });
        }}
      >
        <label>
          From
          <input type="date" value={draft.from} onInput={(e) => setDraft({ ...draft, from: e.currentTarget.value })} />
        </label>
        <label>
          To
          <input type="date" value={draft.to} onInput={(e) => setDraft({ ...draft, to: e.currentTarget.value })} />
        </label>
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
        <button type="submit" class="primary">
          Show
        </button>
      </form>
      <ErrorNote error={rows.error} />
      {rows.value && rows.value.length === 0 && <p class="muted">No usage in this range.</p>}
      {rows.value && rows.value.length > 0 && (
        <div class="table-wrap">
          <table class="table" aria-label={`Usage by ${q.groupBy}`}>
            <thead>
              <tr>
                <th scope="col">{GROUPS.find(([g]) => g === q.groupBy)![1]}</th>
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
        </div>
      )}
      {admin ? <Budgets teamId={me.team.id} users={users.value ?? []} /> : mine.value && <BudgetTable budgets={mine.value.budgets} title="Budgets that apply to me" />}
    </section>
  );
}

function BudgetTable({ budgets, title, onDelete }: { budgets: Budget[]; title: string; onDelete?: (b: Budget) => Promise<unknown> }) {
  return (
    <section class="stack" aria-label={title}>
      <h2>{title}</h2>
      {budgets.length === 0 ? (
        <p class="muted">No budget.</p>
      ) : (
        <div class="table-wrap">
          <table class="table">
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
              {budgets.map((b) => (
                <tr key={b.id}>
                  <td>
                    {b.scope} {b.scope === 'team' ? '' : b.scopeId}
                  </td>
                  <td>{b.period}</td>
                  <td>{credits(b.credits)}</td>
                  <td>{credits(b.spent)}</td>
                  <td>{b.requestsPerMinute ?? '—'}</td>
                  <td>{b.resetsAt ? formatDate(b.resetsAt) : 'never'}</td>
                  {onDelete && (
                    <td>
                      <ConfirmButton label="Delete" what={`${b.scope} ${b.period} budget`} onConfirm={() => onDelete(b)} />
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

function Budgets({ teamId, users }: { teamId: string; users: Array<Schemas['User']> }) {
  const budgets = useLoad(() => sendJson<Budget[]>('GET', '/api/v1/budgets'), []);
  const [f, setF] = useState({ scope: 'team' as 'team' | 'user' | 'apiKey', scopeId: '', period: 'month' as 'day' | 'month' | 'total', credits: '', rpm: '' });
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  return (
    <>
      <ErrorNote error={budgets.error} />
      {budgets.value && (
        <BudgetTable budgets={budgets.value} title="Budgets" onDelete={(b) => sendJson('DELETE', `/api/v1/budgets/${encodeURIComponent(b.id)}`).then(budgets.reload, setError)} />
      )}
      <section class="card stack" aria-labelledby="budget-title">
        <h2 id="budget-title">New budget</h2>
        <form
          class="stack"
          onSubmit={(e) => {
            e.preventDefault();
            if (!f.credits && !f.rpm) return setError(new Error('Set credits, requests per minute, or both.'));
            setBusy(true);
            setError(null);
            const scopeId = f.scope === 'team' ? teamId : f.scope === 'user' ? Number(f.scopeId) : f.scopeId.trim();
            sendJson('POST', '/api/v1/budgets', { scope: f.scope, scopeId, period: f.period, credits: f.credits ? Number(f.credits) : null, requestsPerMinute: f.rpm ? Number(f.rpm) : null })
              .then(() => {
                setF({ ...f, credits: '', rpm: '' });
                budgets.reload();
              }, setError)
              .finally(() => setBusy(false));
          }}
        >
          <div class="row">
            <label>
              Applies to
              <select aria-label="Applies to" value={f.scope} onChange={(e) => setF({ ...f, scope: e.currentTarget.value as typeof f.scope, scopeId: '' })}>
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
              <select aria-label="Period" value={f.period} onChange={(e) => setF({ ...f, period: e.currentTarget.value as typeof f.period })}>
                <option value="day">Day</option>
                <option value="month">Month</option>
                <option value="total">Total (never resets)</option>
              </select>
            </label>
            <label>
              Credits
              <input type="number" min={0} step="any" value={f.credits} onInput={(e) => setF({ ...f, credits: e.currentTarget.value })} />
            </label>
            <label>
              Requests per minute
              <input type="number" min={1} step={1} value={f.rpm} onInput={(e) => setF({ ...f, rpm: e.currentTarget.value })} />
            </label>
          </div>
          <ErrorNote error={error} />
          <div class="actions">
            <button type="submit" class="primary" disabled={busy}>
              Add budget
            </button>
          </div>
        </form>
      </section>
    </>
  );
}
