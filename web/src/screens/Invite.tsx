/**
 * `/invite#token=…`: an invited person (or the first start's admin) sets a password and is signed
 * in. The token stays in the fragment (never sent to the server as part of a URL); the page asks
 * the server whom it is for first, so a used or expired link says so before a password is typed.
 */
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, data } from '../api/client';
import { loadMe, type Me } from '../api/session';
import { ErrorNote } from '../components/Problem';
import { useSubmit } from '../components/useSubmit';
import { t } from '../i18n';

type Invite = { user: { name: string; email: string }; team: { name: string } };
type State = { kind: 'checking' } | { kind: 'ready'; invite: Invite } | { kind: 'unusable'; error: unknown };

const noToken = () => new Error(t('invite.noToken'));

function tokenOf(hash: string): string | null {
  return new URLSearchParams(hash.replace(/^#/, '')).get('token')?.trim() || null;
}

export function InviteScreen({ onSignedIn }: { onSignedIn: (me: Me) => void }) {
  const [token] = useState(() => tokenOf(window.location.hash));
  const [state, setState] = useState<State>(token ? { kind: 'checking' } : { kind: 'unusable', error: noToken() });
  const [attempt, setAttempt] = useState(0);

  useEffect(() => {
    if (!token) return;
    setState({ kind: 'checking' });
    data(api.POST('/api/v1/auth/check-invite', { body: { token } })).then(
      (invite) => setState({ kind: 'ready', invite }),
      (error: unknown) => setState({ kind: 'unusable', error }),
    );
  }, [token, attempt]);

  if (state.kind === 'checking')
    return (
      <p class="loading" aria-busy="true">
        {t('invite.checking')}
      </p>
    );
  if (state.kind === 'unusable') {
    // A refusal of the link itself, or a failure to ask (then trying again may help).
    const refused = !(state.error instanceof ApiError) || state.error.status === 400;
    return (
      <main class="signin">
        <section class="card stack invite" aria-labelledby="invite-title">
          <h1 id="invite-title">{refused ? t('invite.refused') : t('invite.unchecked')}</h1>
          <ErrorNote error={state.error} />
          <div class="actions">
            {!refused && (
              <button type="button" class="primary" onClick={() => setAttempt((n) => n + 1)}>
                {t('common.tryAgain')}
              </button>
            )}
            <a class="button" href="/">
              {t('invite.toSignIn')}
            </a>
          </div>
        </section>
      </main>
    );
  }
  return <SetPassword token={token!} invite={state.invite} onSignedIn={onSignedIn} />;
}

function SetPassword({ token, invite, onSignedIn }: { token: string; invite: Invite; onSignedIn: (me: Me) => void }) {
  const [password, setPassword] = useState('');
  const [repeat, setRepeat] = useState('');
  const submit = useSubmit();
  const accept = async () => {
    if (password !== repeat) throw new Error(t('invite.pwDiffer'));
    await data(api.POST('/api/v1/auth/accept-invite', { body: { token, password } }));
    const me = await loadMe();
    if (!me) throw new Error(t('invite.noSession'));
    onSignedIn(me);
  };
  return (
    <main class="signin">
      <form class="card invite" aria-labelledby="invite-title" onSubmit={submit.handler(accept)}>
        <h1 id="invite-title">{t('invite.title')}</h1>
        <p class="muted">
          {t('invite.welcome.before', { name: invite.user.name })} <strong>{invite.team.name}</strong>
          {t('invite.welcome.after')}
        </p>
        <label>
          {t('signin.email')}
          <input type="email" name="email" autocomplete="username" value={invite.user.email} readOnly />
        </label>
        <label>
          {t('signin.password')}
          <input
            type="password"
            name="password"
            autocomplete="new-password"
            required
            minLength={8}
            maxLength={1024}
            aria-describedby="password-hint"
            value={password}
            onInput={(e) => setPassword(e.currentTarget.value)}
          />
        </label>
        <p class="hint" id="password-hint">
          {t('invite.pwHint')}
        </p>
        <label>
          {t('invite.pwRepeat')}
          <input
            type="password"
            name="repeat"
            autocomplete="new-password"
            required
            maxLength={1024}
            value={repeat}
            onInput={(e) => setRepeat(e.currentTarget.value)}
          />
        </label>
        <ErrorNote error={submit.error} />
        <button type="submit" class="primary" disabled={submit.busy}>
          {submit.busy ? t('invite.busy') : t('invite.submit')}
        </button>
      </form>
    </main>
  );
}
