/**
 * "My prompts" on the Account screen: the prompt library the composer's `/` menu offers. Anyone
 * saves prompts for themselves; team owners/admins also for the whole team. `{{name}}` in the text
 * is a variable, asked for when the prompt is used.
 */
import { useState } from 'preact/hooks';
import { api, data } from '../../api/client';
import { ConfirmButton } from '../../components/ConfirmButton';
import { isTeamAdmin } from '../../components/format';
import { ErrorNote } from '../../components/Problem';
import { useLoad } from '../../components/useLoad';
import { useSubmit } from '../../components/useSubmit';
import { useSession } from '../../session';
import { t } from '../../i18n';

export function PromptLibrary() {
  const { me } = useSession();
  const admin = isTeamAdmin(me.user.role);
  const prompts = useLoad(() => data(api.GET('/api/v1/prompts')), []);
  const [title, setTitle] = useState('');
  const [content, setContent] = useState('');
  const [team, setTeam] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const submit = useSubmit();
  return (
    <section class="card stack" aria-labelledby="prompts-title">
      <h2 id="prompts-title">{t('library.title')}</h2>
      <p class="muted small">
        {t('library.hint.type')} <kbd>/</kbd> {t('library.hint.use')} <code>{'{{name}}'}</code> {t('library.hint.ask')}
      </p>
      <ErrorNote error={prompts.error ?? error} />
      {prompts.value && prompts.value.length > 0 && (
        <ul class="prompt-list stack" aria-label={t('library.title')}>
          {prompts.value.map((p) => (
            <li key={p.id} class="prompt-row">
              <div>
                <strong>{p.title}</strong> <span class="badge">{p.scope === 'team' ? t('library.team') : t('library.mine')}</span>
                <div class="muted small prompt-text">{p.content}</div>
              </div>
              {(p.scope === 'personal' || admin) && (
                <ConfirmButton
                  label={t('common.delete')}
                  what={p.title}
                  onConfirm={() => data(api.DELETE('/api/v1/prompts/{promptId}', { params: { path: { promptId: p.id } } })).then(prompts.reload, setError)}
                />
              )}
            </li>
          ))}
        </ul>
      )}
      <form
        class="stack"
        onSubmit={submit.handler(async () => {
          await data(api.POST('/api/v1/prompts', { body: { title, content, scope: team ? 'team' : 'personal' } }));
          setTitle('');
          setContent('');
          prompts.reload();
        })}
      >
        <label>
          {t('library.titleField')}
          <input value={title} required maxLength={200} onInput={(e) => setTitle(e.currentTarget.value)} />
        </label>
        <label>
          {t('library.prompt')}
          <textarea value={content} required rows={3} maxLength={20000} onInput={(e) => setContent(e.currentTarget.value)} />
        </label>
        {admin && (
          <label class="check">
            <input type="checkbox" checked={team} onChange={(e) => setTeam(e.currentTarget.checked)} />
            {t('library.forTeam')}
          </label>
        )}
        <ErrorNote error={submit.error} />
        <div class="actions">
          <button type="submit" class="primary" disabled={submit.busy}>
            {t('library.save')}
          </button>
        </div>
      </form>
    </section>
  );
}
