/**
 * The team's retention (team settings): how many days threads and prompt logs are kept. The
 * owner changes it; admins see it. Pinned chats are never deleted by it.
 */
import { useEffect, useState } from 'preact/hooks';
import { api, data } from '../../api/client';
import { ErrorNote } from '../../components/Problem';
import { useLoad } from '../../components/useLoad';
import { useSubmit } from '../../components/useSubmit';
import { t } from '../../i18n';

/** A day count as typed: '' keeps everything. */
const toDays = (v: string): number | null => (v.trim() === '' ? null : Number(v));
const fromDays = (d: number | null): string => (d === null ? '' : String(d));

export function RetentionForm({ teamId, owner }: { teamId: string; owner: boolean }) {
  const team = useLoad(() => data(api.GET('/api/v1/teams/{teamId}', { params: { path: { teamId } } })), [teamId]);
  const [threads, setThreads] = useState('');
  const [logs, setLogs] = useState('');
  const [saved, setSaved] = useState(false);
  // The fields open only once they hold the team's values: an effect runs after the render that
  // enabled them, and would otherwise overwrite what was typed in between.
  const [ready, setReady] = useState(false);
  const submit = useSubmit();
  useEffect(() => {
    if (!team.value) return;
    setThreads(fromDays(team.value.retention.threadsDays));
    setLogs(fromDays(team.value.retention.promptLogsDays));
    setReady(true);
  }, [team.value]);
  return (
    <section class="card stack" aria-labelledby="retention-title">
      <h2 id="retention-title">{t('retention.title')}</h2>
      <p class="muted small">{t('retention.hint')}</p>
      <ErrorNote error={team.error} />
      <form
        class="stack"
        onSubmit={submit.handler(() => {
          setSaved(false);
          return data(
            api.PATCH('/api/v1/teams/{teamId}', {
              params: { path: { teamId } },
              body: { retention: { threadsDays: toDays(threads), promptLogsDays: toDays(logs) } },
            }),
          ).then(() => {
            setSaved(true);
            team.reload();
          });
        })}
      >
        <div class="row">
          <label>
            {t('retention.chats')}
            <input type="number" min={1} max={36500} step={1} value={threads} disabled={!owner || !ready} onInput={(e) => setThreads(e.currentTarget.value)} />
          </label>
          <label>
            {t('retention.logs')}
            <input type="number" min={1} max={36500} step={1} value={logs} disabled={!owner || !ready} onInput={(e) => setLogs(e.currentTarget.value)} />
          </label>
        </div>
        <ErrorNote error={submit.error} />
        {owner ? (
          <div class="actions">
            <button type="submit" class="primary" disabled={submit.busy || !ready}>
              {t('retention.save')}
            </button>
            {saved && <span role="status">{t('common.saved')}</span>}
          </div>
        ) : (
          <p class="muted small">{t('retention.ownerOnly')}</p>
        )}
      </form>
    </section>
  );
}
