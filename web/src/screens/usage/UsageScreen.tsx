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
import { locale, t } from '../../i18n';

type Budget = Schemas['Budget'];
type User = Schemas['User'];
type GroupBy = 'day' | 'user' | 'model' | 'workspace' | 'apiKey';
interface Filter extends DayRange {
  groupBy: GroupBy;
}
const GROUPS: Array<[GroupBy, () => string]> = [
  ['day', () => t('usage.day')],
  ['user', () => t('logs.col.user')],
  ['model', () => t('composer.model')],
  ['workspace', () => t('threads.workspace')],
  ['apiKey', () => t('model.apiKey')],
];
const PERIODS: Record<Budget['period'], () => string> = { day: () => t('usage.day'), month: () => t('usage.month'), total: () => t('usage.total') };
/** The period inside a sentence ("Uma's day budget"). */
const PERIOD_WORDS: Record<Budget['period'], () => string> = {
  day: () => t('usage.word.day'),
  month: () => t('usage.word.month'),
  total: () => t('usage.word.total'),
};
const credits = (n: number | null) => (n == null ? '—' : n.toLocaleString(locale(), { maximumFractionDigits: 2 }));
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
    if (q.groupBy === 'model') return names.value?.find((m) => m.id === key)?.name ?? t('usage.deletedModel');
    if (q.groupBy === 'user')
      return users.value?.find((u) => String(u.id) === key)?.name ?? (key === String(me.user.id) ? me.user.name : t('usage.removedUser'));
    if (q.groupBy === 'workspace') return workspaces.value?.find((w) => w.id === key)?.name ?? t('usage.deletedWorkspace');
    if (q.groupBy === 'apiKey') return keys.value?.find((k) => k.id === key)?.name ?? t('usage.otherKey');
    return key;
  };
  const groupName = GROUPS.find(([g]) => g === q.groupBy)![1]();

  return (
    <section class="page stack">
      <div class="page-head">
        <h1>{t('nav.usage')}</h1>
        <a class="button" href={`/api/v1/usage/csv?${new URLSearchParams(query).toString()}`} download="usage.csv">
          {t('audit.csv')}
        </a>
      </div>
      <p class="muted small">{admin ? t('logs.every') : t('logs.own')}</p>
      {mine.value && (
        <p class="muted">
          {t('usage.mySpend', { day: credits(mine.value.spent.day), month: credits(mine.value.spent.month), total: credits(mine.value.spent.total) })}
        </p>
      )}
      <ErrorNote error={mine.error} />
      <FilterBar label={t('usage.range')} draft={draft} onDraft={setDraft} onApply={setQ} submit={t('usage.show')}>
        <label>
          {t('usage.groupBy')}
          <select aria-label={t('usage.groupBy')} value={draft.groupBy} onChange={(e) => setDraft({ ...draft, groupBy: e.currentTarget.value as GroupBy })}>
            {GROUPS.filter(([g]) => admin || g !== 'user').map(([g, l]) => (
              <option key={g} value={g}>
                {l()}
              </option>
            ))}
          </select>
        </label>
      </FilterBar>
      <ErrorNote error={rows.error} />
      {rows.loading && !rows.value && <p aria-busy="true">{t('common.loading')}</p>}
      {rows.value && rows.value.length === 0 && <p class="muted">{t('usage.none')}</p>}
      {rows.value && rows.value.length > 0 && (
        <TableWrap label={t('usage.by', { group: groupName })}>
          <table class="table numbers" aria-label={t('usage.by', { group: groupName })}>
            <thead>
              <tr>
                <th scope="col">{groupName}</th>
                <th scope="col">{t('usage.col.requests')}</th>
                <th scope="col">{t('usage.col.prompt')}</th>
                <th scope="col">{t('usage.col.answer')}</th>
                <th scope="col">{t('usage.col.credits')}</th>
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
        mine.value && <BudgetTable budgets={mine.value.budgets} users={[]} title={t('usage.mine')} />
      )}
    </section>
  );
}

/** What a budget limits, as a person reads it ("You" for the caller's own). */
function appliesTo(b: Budget, users: User[], selfId: number): string {
  if (b.scope === 'team') return t('usage.wholeTeam');
  if (b.scope === 'user' && b.scopeId === String(selfId)) return t('usage.you');
  if (b.scope === 'user') return users.find((u) => String(u.id) === b.scopeId)?.name ?? t('audit.user', { id: b.scopeId });
  return t('usage.oneKey');
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
        <p class="muted">{t('usage.noBudget')}</p>
      ) : (
        <TableWrap label={title}>
          <table class="table numbers" aria-label={title}>
            <thead>
              <tr>
                <th scope="col">{t('usage.appliesTo')}</th>
                <th scope="col">{t('usage.period')}</th>
                <th scope="col">{t('usage.col.credits')}</th>
                <th scope="col">{t('usage.col.spent')}</th>
                <th scope="col">{t('usage.col.rpm')}</th>
                <th scope="col">{t('usage.col.resets')}</th>
                {onDelete && <th scope="col">{t('usage.col.actions')}</th>}
              </tr>
            </thead>
            <tbody>
              {budgets.map((b) => {
                const what = t('usage.budgetWhat', { who: appliesTo(b, users, selfId), period: PERIOD_WORDS[b.period]() });
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
                    <td>{PERIODS[b.period]()}</td>
                    <td>{credits(b.credits)}</td>
                    <td>{credits(b.spent)}</td>
                    <td>{b.requestsPerMinute ?? '—'}</td>
                    <td>{b.resetsAt ? formatDate(b.resetsAt) : t('usage.never')}</td>
                    {onDelete && (
                      <td>
                        <div class="actions">
                          <button type="button" class="small-button" aria-label={t('common.editWhat', { name: what })} onClick={() => setEditing(b.id)}>
                            {t('common.edit')}
                          </button>
                          <ConfirmButton label={t('common.delete')} what={what} onConfirm={() => onDelete(b)} />
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
      aria-label={t('common.editWhat', { name: what })}
      onSubmit={submit.handler(() =>
        data(api.PATCH('/api/v1/budgets/{id}', { params: { path: { id: b.id } }, body: { credits: limit(f.credits), requestsPerMinute: limit(f.rpm) } })).then(
          () => onDone(true),
        ),
      )}
    >
      <p class="small">
        <strong>{what}</strong> · {t('usage.spentHint', { spent: credits(b.spent) })}
      </p>
      <div class="row numbers">
        <LimitFields value={f} onChange={setF} />
      </div>
      <ErrorNote error={submit.error} />
      <div class="actions">
        <button type="submit" class="primary" disabled={submit.busy}>
          {t('usage.save')}
        </button>
        <button type="button" onClick={() => onDone(false)}>
          {t('common.cancel')}
        </button>
      </div>
    </form>
  );
}

function LimitFields({ value: f, onChange }: { value: Limits; onChange: (l: Limits) => void }) {
  return (
    <>
      <label>
        {t('usage.col.credits')}
        <input type="number" min={0} step="any" value={f.credits} onInput={(e) => onChange({ ...f, credits: e.currentTarget.value })} />
      </label>
      <label>
        {t('usage.rpm')}
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
          title={t('usage.budgets')}
          onSaved={budgets.reload}
          onDelete={(b) => data(api.DELETE('/api/v1/budgets/{id}', { params: { path: { id: b.id } } })).then(budgets.reload, submit.setError)}
        />
      )}
      <section class="card stack" aria-labelledby="budget-title">
        <h2 id="budget-title">{t('usage.new')}</h2>
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
              {t('usage.appliesTo')}
              <select
                aria-label={t('usage.appliesTo')}
                value={f.scope}
                onChange={(e) => setF({ ...f, scope: e.currentTarget.value as Budget['scope'], scopeId: '' })}
              >
                <option value="team">{t('usage.theWholeTeam')}</option>
                <option value="user">{t('usage.oneUser')}</option>
                <option value="apiKey">{t('usage.oneKey')}</option>
              </select>
            </label>
            {f.scope === 'user' && (
              <label>
                {t('logs.col.user')}
                <select aria-label={t('logs.col.user')} value={f.scopeId} required onChange={(e) => setF({ ...f, scopeId: e.currentTarget.value })}>
                  <option value="">{t('usage.choose')}</option>
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
                {t('usage.keyId')}
                <input value={f.scopeId} required maxLength={64} onInput={(e) => setF({ ...f, scopeId: e.currentTarget.value })} />
              </label>
            )}
            <label>
              {t('usage.period')}
              <select aria-label={t('usage.period')} value={f.period} onChange={(e) => setF({ ...f, period: e.currentTarget.value as Budget['period'] })}>
                {Object.entries(PERIODS).map(([p, l]) => (
                  <option key={p} value={p}>
                    {l()}
                  </option>
                ))}
              </select>
            </label>
            <LimitFields value={f} onChange={(l) => setF({ ...f, ...l })} />
          </div>
          <p class="hint">{t('usage.setHint')}</p>
          <ErrorNote error={submit.error} />
          <div class="actions">
            <button type="submit" class="primary" disabled={submit.busy}>
              {t('usage.add')}
            </button>
          </div>
        </form>
      </section>
    </>
  );
}
