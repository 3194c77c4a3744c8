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

type Invite = { user: { name: string; email: string }; team: { name: string } };
type State = { kind: 'checking' } | { kind: 'ready'; invite: Invite } | { kind: 'unusable'; error: unknown };

const NO_TOKEN = new Error("This address has no invite in it. Open the whole link you were sent, or ask your team's admin for a new invite.");

function tokenOf(hash: string): string | null {
  return new URLSearchParams(hash.replace(/^#/, '')).get('token')?.trim() || null;
}

export function InviteScreen({ onSignedIn }: { onSignedIn: (me: Me) => void }) {
  const [token] = useState(() => tokenOf(window.location.hash));
  const [state, setState] = useState<State>(token ? { kind: 'checking' } : { kind: 'unusable', error: NO_TOKEN });
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
        Checking your invite…
      </p>
    );
  if (state.kind === 'unusable') {
    // A refusal of the link itself, or a failure to ask (then trying again may help).
    const refused = !(state.error instanceof ApiError) || state.error.status === 400;
    return (
      <main class="signin">
        <section class="card stack invite" aria-labelledby="invite-title">
          <h1 id="invite-title">{refused ? 'This invite link cannot be used' : 'Your invite could not be checked'}</h1>
          <ErrorNote error={state.error} />
          <div class="actions">
            {!refused && (
              <button type="button" class="primary" onClick={() => setAttempt((n) => n + 1)}>
                Try again
              </button>
            )}
            <a class="button" href="/">
              Go to sign-in
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
    if (password !== repeat) throw new Error('The two passwords are not the same: type the same password in both fields.');
    await data(api.POST('/api/v1/auth/accept-invite', { body: { token, password } }));
    const me = await loadMe();
    if (!me)
      throw new Error('Your password is set, but this browser did not keep you signed in. Are cookies enabled? Then sign in with your email and new password.');
    onSignedIn(me);
  };
  return (
    <main class="signin">
      <form class="card invite" aria-labelledby="invite-title" onSubmit={submit.handler(accept)}>
        <h1 id="invite-title">Set your password</h1>
        <p class="muted">
          Welcome, {invite.user.name}. Choose a password to join <strong>{invite.team.name}</strong>; you will sign in with it from now on.
        </p>
        <label>
          Email
          <input type="email" name="email" autocomplete="username" value={invite.user.email} readOnly />
        </label>
        <label>
          Password
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
          At least 8 characters. A few unrelated words make a strong one.
        </p>
        <label>
          Repeat password
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
          {submit.busy ? 'Setting your password…' : 'Set password and sign in'}
        </button>
      </form>
    </main>
  );
}
