/**
 * What a screen shows, up front, to someone whose role may not use it (an admin page opened
 * from a bookmark or a shared link): why, and where to go instead — never a form that would fail.
 */
import type { ComponentChildren } from 'preact';
import { Link } from './Link';

export function NotAllowed({ title, back, children }: { title: string; back: { href: string; label: string }; children: ComponentChildren }) {
  return (
    <section class="page narrow stack">
      <h1>{title}</h1>
      <p class="error-note" role="alert">
        {children}
      </p>
      <p>
        <Link href={back.href}>{back.label}</Link>
      </p>
    </section>
  );
}
