/** Previous / next under a page of results (a Spring-style page), with where the reader is and how many there are. */
import { t } from '../i18n';

interface PageInfo {
  number: number;
  totalPages: number;
  totalElements: number;
  first: boolean;
  last: boolean;
}

/**
 * `count`: how many there are in the caller's words ("12 logs", its plural by the number);
 * `onStep(-1)` / `onStep(1)`: the caller moves its own page number (the one it asked for).
 */
export function Pager({ page, count, onStep }: { page: PageInfo; count: string; onStep: (delta: -1 | 1) => void }) {
  return (
    <nav class="pager" aria-label={t('pager.label')}>
      <button type="button" disabled={page.first} onClick={() => onStep(-1)}>
        {t('pager.previous')}
      </button>
      <span>
        <span class="pager-part">{t('pager.page', { n: page.number + 1, of: Math.max(page.totalPages, 1) })}</span> · <span class="pager-part">{count}</span>
      </span>
      <button type="button" disabled={page.last} onClick={() => onStep(1)}>
        {t('pager.next')}
      </button>
    </nav>
  );
}
