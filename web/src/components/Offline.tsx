/** What the app shows when it opened without a connection to its server (the kept shell). */
import { useEffect } from 'preact/hooks';

export function Offline() {
  // Back online: start again, as if opened now.
  useEffect(() => {
    const reload = () => window.location.reload();
    window.addEventListener('online', reload);
    return () => window.removeEventListener('online', reload);
  }, []);
  return (
    <main class="signin" aria-labelledby="offline-title">
      <div class="notice">
        <h1 id="offline-title">You are offline</h1>
        <p>Atrium needs a connection to its server. It opens again by itself when you are back online.</p>
        <button type="button" onClick={() => window.location.reload()}>
          Try again
        </button>
      </div>
    </main>
  );
}
