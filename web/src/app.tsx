/** The app: who is signed in decides between the sign-in screen and the routed screens. */
import { useEffect, useMemo, useState } from 'preact/hooks';
import { onUnauthorized } from './api/client';
import { loadMe, signOut, type Me } from './api/session';
import { lazyScreen } from './components/Lazy';
import { ErrorNote } from './components/Problem';
import { Shell } from './components/Shell';
import { renderRoute } from './pages';
import { navigate, usePath } from './router';
import { SignIn } from './screens/SignIn';
import { SessionProvider, type SessionValue } from './session';

// Opened once per person, so loaded only then.
const InviteScreen = lazyScreen(() => import('./screens/Invite').then((m) => m.InviteScreen));
// Opened by people following a shared link, so loaded only then.
const SharedThreadScreen = lazyScreen(() => import('./screens/SharedThread').then((m) => m.SharedThreadScreen));

type State = { kind: 'loading' } | { kind: 'signed-out' } | { kind: 'signed-in'; me: Me } | { kind: 'failed'; error: unknown };

export function App() {
  const [state, setState] = useState<State>({ kind: 'loading' });
  const path = usePath();

  useEffect(() => {
    loadMe().then(
      (me) => setState(me ? { kind: 'signed-in', me } : { kind: 'signed-out' }),
      (error: unknown) => setState({ kind: 'failed', error }),
    );
    return onUnauthorized(() => setState({ kind: 'signed-out' }));
  }, []);

  const session = useMemo<SessionValue | null>(
    () =>
      state.kind === 'signed-in'
        ? {
            me: state.me,
            signOut: async () => {
              await signOut();
              setState({ kind: 'signed-out' });
              navigate('/', { replace: true });
            },
          }
        : null,
    [state],
  );

  // A shared chat is read by anyone with its link, signed in or not.
  const shared = /^\/share\/([^/]+)$/.exec(path);
  if (shared) return <SharedThreadScreen token={decodeURIComponent(shared[1]!)} />;

  // An invite link is for the person invited, whoever is signed in in this browser (if anyone):
  // accepting it signs that person in.
  if (path === '/invite') {
    return (
      <InviteScreen
        onSignedIn={(me) => {
          setState({ kind: 'signed-in', me });
          navigate('/', { replace: true });
        }}
      />
    );
  }

  switch (state.kind) {
    case 'loading':
      return (
        <p class="loading" aria-busy="true">
          Loading…
        </p>
      );
    case 'failed':
      return (
        <main class="signin">
          <ErrorNote error={state.error} />
          <button type="button" onClick={() => window.location.reload()}>
            Try again
          </button>
        </main>
      );
    case 'signed-out':
      return <SignIn onSignedIn={(me) => setState({ kind: 'signed-in', me })} />;
    case 'signed-in':
      return (
        <SessionProvider value={session!}>
          <Shell path={path}>{renderRoute(path)}</Shell>
        </SessionProvider>
      );
  }
}
