/**
 * A table that may scroll sideways on a narrow screen: the scrolling box is a named region that
 * takes keyboard focus, so it can be scrolled without a pointer (WCAG 2.1.1).
 */
import type { ComponentChildren } from 'preact';

export function TableWrap({ label, children }: { label: string; children: ComponentChildren }) {
  return (
    <div class="table-wrap" role="region" aria-label={label} tabIndex={0}>
      {children}
    </div>
  );
}
