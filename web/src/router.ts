/**
 * A small History-API router: the server answers index.html for every app path, so
 * paths are real URLs (/w/<id>/t/<id>) that survive a reload and can be shared.
 */
import { useEffect, useState } from 'preact/hooks';

type Listener = () => void;
const listeners = new Set<Listener>();

export function currentPath(): string {
  return window.location.pathname;
}

export function navigate(to: string, opts: { replace?: boolean } = {}): void {
  if (to === currentPath() + window.location.search) return;
  if (opts.replace) window.history.replaceState(null, '', to);
  else window.history.pushState(null, '', to);
  for (const l of listeners) l();
}

window.addEventListener('popstate', () => {
  for (const l of listeners) l();
});

/** The current path; re-renders the caller when it changes. */
export function usePath(): string {
  const [path, setPath] = useState(currentPath);
  useEffect(() => {
    const l = () => setPath(currentPath());
    listeners.add(l);
    return () => void listeners.delete(l);
  }, []);
  return path;
}

export type Params = Record<string, string>;

/** Matches `/w/:workspaceId/t/:threadId` against a path; null when it does not match. */
export function match(pattern: string, path: string): Params | null {
  const want = pattern.split('/').filter(Boolean);
  const got = path.split('/').filter(Boolean);
  if (want.length !== got.length) return null;
  const params: Params = {};
  for (let i = 0; i < want.length; i++) {
    const w = want[i]!;
    const g = decodeURIComponent(got[i]!);
    if (w.startsWith(':')) params[w.slice(1)] = g;
    else if (w !== g) return null;
  }
  return params;
}

/** A link that navigates without reloading the page (modified clicks open a tab as usual). */
export function onLinkClick(e: MouseEvent, to: string): void {
  if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  e.preventDefault();
  navigate(to);
}
