/** The app: who is signed in decides between the sign-in screen and the routed screens. */
import { useEffect, useMemo, useState } from 'preact/hooks';
import { ApiError, onUnauthorized } from './api/client';
import { loadMe, signOut, type Me } from './api/session';
import { lazyScreen } from './components/Lazy';
import { Offline } from './components/Offline';
import { ErrorNote } from './components/Problem';
import { Shell } from './components/Shell';
import { renderRoute } from './pages';
import { navigate, usePath } from './router';
import { SignIn } from './screens/SignIn';
import { SessionProvider, type SessionValue } from './session';
import { settings } from './settings';
import { onLanguage, t } from './i18n';

// Opened once per person, so loaded only then.
const InviteScreen = lazyScreen(() => import('./screens/Invite').then((m) => m.InviteScreen));
// Opened by people following a shared link, so loaded only then.
const SharedThreadScreen = lazyScreen(() => import('./screens/SharedThread').then((m) => m.SharedThreadScreen));

/** The server could not be reached and the browser says it has no network. */
const isOffline = (error: unknown) => !navigator.onLine && error instanceof ApiError && error.code === 'network_error';

type State = { kind: 'loading' } | { kind: 'signed-out' } | { kind: 'signed-in'; me: Me } | { kind: 'failed'; error: unknown };

export function App() {
  const [state, setState] = useState<State>({ kind: 'loading' });
  const path = usePath();
  // Another language chosen: every screen renders again in it (a new key remounts them).
  const [language, setLanguage] = useState(0);
  useEffect(() => onLanguage(() => setLanguage((n) => n + 1)), []);

  useEffect(() => {
    loadMe().then(
      (me) => {
        // Opened at its start page, the app opens in the person's default workspace (settings.ts).
        const home = settings().defaultWorkspaceId;
        if (me && home && window.location.pathname === '/') navigate(`/w/${home}`, { replace: true });
        setState(me ? { kind: 'signed-in', me } : { kind: 'signed-out' });
      },
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
  if (shared) return <SharedThreadScreen key={language} token={decodeURIComponent(shared[1]!)} />;

  // An invite link is for the person invited, whoever is signed in in this browser (if anyone):
  // accepting it signs that person in.
  if (path === '/invite') {
    return (
      <InviteScreen
        key={language}
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
          {t('common.loading')}
        </p>
      );
    case 'failed':
      if (isOffline(state.error)) return <Offline />;
      return (
        <main class="signin">
          <ErrorNote error={state.error} />
          <button type="button" onClick={() => window.location.reload()}>
            {t('common.tryAgain')}
          </button>
        </main>
      );
    case 'signed-out':
      return <SignIn key={language} onSignedIn={(me) => setState({ kind: 'signed-in', me })} />;
    case 'signed-in':
      return (
        <SessionProvider value={session!}>
          <Shell key={language} path={path}>
            {renderRoute(path)}
          </Shell>
        </SessionProvider>
      );
  }
}
