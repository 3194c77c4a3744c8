import { useEffect, useState } from 'preact/hooks';
import { loadSignInMethods, signIn, type Me, type SignInMethods } from '../api/session';
import { ErrorNote } from '../components/Problem';
import { useSubmit } from '../components/useSubmit';

/** Words for the reasons the server gives when a sign-in with the identity provider fails (`/?signInError=<reason>`). */
function providerFailure(reason: string, name: string): string {
  switch (reason) {
    case 'not_mapped':
      return `Your ${name} account is in no group that has access to Atrium. Ask your administrator to add you to one.`;
    case 'no_email':
      return `${name} did not share your email address, which Atrium needs. Ask your administrator.`;
    case 'email_taken':
      return `A team already has a user with your email address who is not linked to your ${name} account. Ask your team's admin.`;
    case 'denied':
      return `The sign-in was cancelled or refused at ${name}.`;
    case 'unavailable':
      return `${name} could not be reached. Try again in a moment.`;
    default:
      return 'The sign-in could not be completed (it may have taken too long, or the link was used already). Please try again.';
  }
}

/** The reason in the address bar, once: it is removed so a reload does not show it again. */
function takeSignInError(): string | null {
  const params = new URLSearchParams(window.location.search);
  const reason = params.get('signInError');
  if (reason === null) return null;
  params.delete('signInError');
  const rest = params.toString();
  window.history.replaceState(window.history.state, '', `${window.location.pathname}${rest ? `?${rest}` : ''}${window.location.hash}`);
  return reason;
}

export function SignIn({ onSignedIn }: { onSignedIn: (me: Me) => void }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [methods, setMethods] = useState<SignInMethods | null>(null);
  const [failure] = useState(takeSignInError);
  const submit = useSubmit();
  useEffect(() => {
    void loadSignInMethods().then(setMethods);
  }, []);
  if (!methods) {
    return (
      <p class="loading" aria-busy="true">
        Loading…
      </p>
    );
  }
  const { oidc } = methods;
  return (
    <main class="signin">
      <section class="card signin-box" aria-labelledby="signin-title">
        <h1 id="signin-title">Sign in to Atrium</h1>
        {failure !== null && (
          <div class="error-note" role="alert">
            <p>{providerFailure(failure, oidc?.name ?? 'the identity provider')}</p>
          </div>
        )}
        {oidc && (
          <button type="button" class="primary" onClick={() => window.location.assign(oidc.loginUrl)}>
            Sign in with {oidc.name}
          </button>
        )}
        {oidc && methods.password && <p class="signin-or">or with your email and password</p>}
        {methods.password && (
          <form onSubmit={submit.handler(() => signIn(email.trim(), password).then(onSignedIn))}>
            <label>
              Email
              <input type="email" name="email" autocomplete="username" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
            </label>
            <label>
              Password
              <input
                type="password"
                name="password"
                autocomplete="current-password"
                required
                value={password}
                onInput={(e) => setPassword(e.currentTarget.value)}
              />
            </label>
            <ErrorNote error={submit.error} />
            <button type="submit" class={oidc ? undefined : 'primary'} disabled={submit.busy}>
              {submit.busy ? 'Signing in…' : 'Sign in'}
            </button>
          </form>
        )}
        {!methods.password && !oidc && <p>Signing in to this server with a browser is turned off; programs use API keys.</p>}
      </section>
    </main>
  );
}
