import { useState } from 'preact/hooks';
import { signIn, type Me } from '../api/session';
import { ErrorNote } from '../components/Problem';
import { useSubmit } from '../components/useSubmit';

export function SignIn({ onSignedIn }: { onSignedIn: (me: Me) => void }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const submit = useSubmit();
  return (
    <main class="signin">
      <form class="card" aria-labelledby="signin-title" onSubmit={submit.handler(() => signIn(email.trim(), password).then(onSignedIn))}>
        <h1 id="signin-title">Sign in to Atrium</h1>
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
        <button type="submit" class="primary" disabled={submit.busy}>
          {submit.busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
