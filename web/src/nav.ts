/**
 * The app's main sections, in the order the navigation shows them. A new screen adds one entry
 * here and its paths in pages.tsx; `roles` limits an entry to team owners/admins.
 */
import type { Me } from './api/session';
import { t } from './i18n';

export interface NavEntry {
  href: string;
  /** read when shown, in the language spoken */
  label: () => string;
  /** Paths under this section (the entry is marked current on them). */
  prefixes: string[];
  roles?: Array<Me['user']['role']>;
}

export const NAV: NavEntry[] = [
  { href: '/', label: () => t('nav.chat'), prefixes: ['/', '/w/', '/workspaces'] },
  // part 2: loaded on first use (pages.tsx)
  { href: '/documents', label: () => t('nav.documents'), prefixes: ['/documents'] },
  { href: '/models', label: () => t('nav.models'), prefixes: ['/models'] },
  { href: '/mcp-servers', label: () => t('nav.mcp'), prefixes: ['/mcp-servers'] },
  { href: '/logs', label: () => t('nav.logs'), prefixes: ['/logs'] },
  { href: '/usage', label: () => t('nav.usage'), prefixes: ['/usage'] },
  { href: '/team', label: () => t('nav.team'), prefixes: ['/team'], roles: ['owner', 'admin'] },
  { href: '/audit', label: () => t('nav.audit'), prefixes: ['/audit'], roles: ['owner', 'admin'] },
  { href: '/account', label: () => t('nav.account'), prefixes: ['/account'] },
];

export function visibleNav(me: Me): NavEntry[] {
  return NAV.filter((e) => !e.roles || e.roles.includes(me.user.role));
}

export function isCurrent(entry: NavEntry, path: string): boolean {
  return entry.prefixes.some((p) => (p === '/' ? path === '/' : path.startsWith(p)));
}
