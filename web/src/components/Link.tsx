import type { ComponentChildren } from 'preact';
import { onLinkClick } from '../router';

interface Props {
  href: string;
  children: ComponentChildren;
  class?: string;
  title?: string;
  'aria-label'?: string;
  'aria-current'?: 'page' | undefined;
  onNavigate?: () => void;
}

/** An in-app link: navigates without reloading (modified clicks open a tab as usual). */
export function Link({ href, children, onNavigate, ...rest }: Props) {
  return (
    <a
      {...rest}
      href={href}
      onClick={(e) => {
        onLinkClick(e, href);
        onNavigate?.();
      }}
    >
      {children}
    </a>
  );
}
