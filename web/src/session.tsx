/** The signed-in user for the whole app (null: show the sign-in screen). */
import { createContext, type ComponentChildren } from 'preact';
import { useContext } from 'preact/hooks';
import type { Me } from './api/session';

export interface SessionValue {
  me: Me;
  signOut: () => Promise<void>;
}

export const SessionContext = createContext<SessionValue | null>(null);

export function useSession(): SessionValue {
  const s = useContext(SessionContext);
  if (!s) throw new Error('useSession() outside a signed-in screen');
  return s;
}

export function SessionProvider({ value, children }: { value: SessionValue; children: ComponentChildren }) {
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}
