/**
 * The app's main sections, in the order the navigation shows them. A new screen adds one entry
 * here and its paths in pages.tsx; `roles` limits an entry to team owners/admins.
 */
import type { Me } from './api/session';

export interface NavEntry {
  href: string;
  label: string;
  /** Paths under this section (the entry is marked current on them). */
  prefixes: string[];
  roles?: Array<Me['user']['role']>;
}

export const NAV: NavEntry[] = [
  { href: '/', label: 'Chat', prefixes: ['/', '/w/', '/workspaces'] },
  // part 2: loaded on first use (pages.tsx)
  { href: '/documents', label: 'Documents', prefixes: ['/documents'] },
  { href: '/models', label: 'Models', prefixes: ['/models'] },
  { href: '/mcp-servers', label: 'MCP servers', prefixes: ['/mcp-servers'] },
  { href: '/logs', label: 'Logs', prefixes: ['/logs'] },
  { href: '/usage', label: 'Usage', prefixes: ['/usage'] },
  { href: '/team', label: 'Team', prefixes: ['/team'], roles: ['owner', 'admin'] },
  { href: '/audit', label: 'Audit log', prefixes: ['/audit'], roles: ['owner', 'admin'] },
  { href: '/account', label: 'Account', prefixes: ['/account'] },
];

export function visibleNav(me: Me): NavEntry[] {
  return NAV.filter((e) => !e.roles || e.roles.includes(me.user.role));
}

export function isCurrent(entry: NavEntry, path: string): boolean {
  return entry.prefixes.some((p) => (p === '/' ? path === '/' : path.startsWith(p)));
}
