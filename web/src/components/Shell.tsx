/** The signed-in layout: a top bar with the sections (nav.ts) and the account menu, then the screen. */
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { isCurrent, visibleNav } from '../nav';
import { useSession } from '../session';
import { Icon } from './Icon';
import { Link } from './Link';
import { t } from '../i18n';

export function Shell({ path, children }: { path: string; children: ComponentChildren }) {
  const { me, signOut } = useSession();
  const [menuOpen, setMenuOpen] = useState(false);
  const [signingOut, setSigningOut] = useState(false);
  return (
    <div class="shell">
      <header class="topbar">
        <Link href="/" class="brand" aria-label={t('shell.home')}>
          Atrium
        </Link>
        <button
          type="button"
          class="icon-button nav-toggle"
          aria-label={t('shell.menu')}
          aria-expanded={menuOpen}
          aria-controls="main-nav"
          onClick={() => setMenuOpen(!menuOpen)}
        >
          <Icon name="menu" />
        </button>
        <nav id="main-nav" aria-label={t('shell.mainNav')} class={menuOpen ? 'open' : ''}>
          {visibleNav(me).map((e) => (
            <Link key={e.href} href={e.href} aria-current={isCurrent(e, path) ? 'page' : undefined} onNavigate={() => setMenuOpen(false)}>
              {e.label()}
            </Link>
          ))}
          <span class="account" title={me.user.email}>
            {me.user.name} · {me.team.name}
          </span>
          <button
            type="button"
            class="ghost"
            disabled={signingOut}
            onClick={() => {
              setSigningOut(true);
              void signOut().finally(() => setSigningOut(false));
            }}
          >
            {t('shell.signOut')}
          </button>
        </nav>
      </header>
      {/* the screen scrolls here, not the page: in the tab order so a keyboard can scroll a screen that has no control */}
      <main class="screen" tabIndex={0}>
        {children}
      </main>
    </div>
  );
}
