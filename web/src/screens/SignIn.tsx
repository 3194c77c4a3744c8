import { useState } from 'preact/hooks';
import { signIn, type Me } from '../api/session';
import { ErrorNote } from '../components/Problem';

export function SignIn({ onSignedIn }: { onSignedIn: (me: Me) => void }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  return (
    <main class="signin">
      <form
        class="card"
        aria-labelledby="signin-title"
        onSubmit={(e) => {
          e.preventDefault();
          setBusy(true);
          setError(null);
          signIn(email.trim(), password)
            .then(onSignedIn, setError)
            .finally(() => setBusy(false));
        }}
      >
        <h1 id="signin-title">Sign in to Atrium</h1>
        <label>
          Email
          <input type="email" name="email" autocomplete="username" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
        </label>
        <label>
          Password
          <input type="password" name="password" autocomplete="current-password" required value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
        </label>
        <ErrorNote error={error} />
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
