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
      <h2 id="prompts-title">Saved prompts</h2>
      <p class="muted small">
        Type <kbd>/</kbd> in an empty message box to use one. Write <code>{'{{name}}'}</code> where the prompt should ask for something when it is used.
      </p>
      <ErrorNote error={prompts.error ?? error} />
      {prompts.value && prompts.value.length > 0 && (
        <ul class="prompt-list stack" aria-label="Saved prompts">
          {prompts.value.map((p) => (
            <li key={p.id} class="prompt-row">
              <div>
                <strong>{p.title}</strong> <span class="badge">{p.scope === 'team' ? 'team' : 'mine'}</span>
                <div class="muted small prompt-text">{p.content}</div>
              </div>
              {(p.scope === 'personal' || admin) && (
                <ConfirmButton
                  label="Delete"
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
          Title
          <input value={title} required maxLength={200} onInput={(e) => setTitle(e.currentTarget.value)} />
        </label>
        <label>
          Prompt
          <textarea value={content} required rows={3} maxLength={20000} onInput={(e) => setContent(e.currentTarget.value)} />
        </label>
        {admin && (
          <label class="check">
            <input type="checkbox" checked={team} onChange={(e) => setTeam(e.currentTarget.checked)} />
            For the whole team
          </label>
        )}
        <ErrorNote error={submit.error} />
        <div class="actions">
          <button type="submit" class="primary" disabled={submit.busy}>
            Save prompt
          </button>
        </div>
      </form>
    </section>
  );
}
