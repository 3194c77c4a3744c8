import { useEffect, useState } from 'preact/hooks';
import { loadSignInMethods, signIn, type Me, type SignInMethods } from '../api/session';
import { ErrorNote } from '../components/Problem';
import { useSubmit } from '../components/useSubmit';
import { t } from '../i18n';

/** Words for the reasons the server gives when a sign-in with the identity provider fails (`/?signInError=<reason>`). */
function providerFailure(reason: string, name: string): string {
  switch (reason) {
    case 'not_mapped':
      return t('signin.fail.notMapped', { name });
    case 'no_email':
      return t('signin.fail.noEmail', { name });
    case 'email_taken':
      return t('signin.fail.emailTaken', { name });
    case 'denied':
      return t('signin.fail.denied', { name });
    case 'unavailable':
      return t('signin.fail.unavailable', { name });
    default:
      return t('signin.fail.other');
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
        {t('common.loading')}
      </p>
    );
  }
  const { oidc } = methods;
  return (
    <main class="signin">
      <section class="card signin-box" aria-labelledby="signin-title">
        <h1 id="signin-title">{t('signin.title')}</h1>
        {failure !== null && (
          <div class="error-note" role="alert">
            <p>{providerFailure(failure, oidc?.name ?? t('signin.theProvider'))}</p>
          </div>
        )}
        {oidc && (
          <button type="button" class="primary" onClick={() => window.location.assign(oidc.loginUrl)}>
            {t('signin.with', { name: oidc.name })}
          </button>
        )}
        {oidc && methods.password && <p class="signin-or">{t('signin.or')}</p>}
        {methods.password && (
          <form onSubmit={submit.handler(() => signIn(email.trim(), password).then(onSignedIn))}>
            <label>
              {t('signin.email')}
              <input type="email" name="email" autocomplete="username" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
            </label>
            <label>
              {t('signin.password')}
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
              {submit.busy ? t('signin.busy') : t('signin.submit')}
            </button>
          </form>
        )}
        {!methods.password && !oidc && <p>{t('signin.off')}</p>}
      </section>
    </main>
  );
}
