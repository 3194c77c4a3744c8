/**
 * The sources under an answer: collapsed as "Sources (n)", opened to read their excerpts, each
 * numbered as the answer cites it ([1] … [12]); a passage's full text opens in the source dialog.
 * Sources far less relevant than the best one are behind a button (sources.ts says the rule).
 */
import { forwardRef } from 'preact/compat';
import { useEffect, useImperativeHandle, useMemo, useRef, useState } from 'preact/hooks';
import type { Source } from '../../api/client';
import { splitSources } from './sources';
import { formatDecimal } from '../../components/format';
import { t } from '../../i18n';

export interface SourceListHandle {
  /** Opens the list and brings source n into view, focused (a citation was clicked). */
  open(n: number): void;
}

interface Props {
  sources: Source[];
  /** the source numbers the answer cites */
  cited: number[];
  onShow: (s: Source) => void;
}

export const SourceList = forwardRef<SourceListHandle, Props>(function SourceList({ sources, cited, onShow }, ref) {
  const [open, setOpen] = useState(false);
  const [showLess, setShowLess] = useState(false);
  const [current, setCurrent] = useState<{ n: number } | null>(null);
  const box = useRef<HTMLElement>(null);
  const { listed, less } = useMemo(() => splitSources(sources, cited), [sources, cited]);

  useImperativeHandle(
    ref,
    () => ({
      open(n: number) {
        setOpen(true);
        if (less.some((x) => x.n === n)) setShowLess(true);
        setCurrent({ n });
      },
    }),
    [less],
  );

  useEffect(() => {
    if (!current) return;
    const button = box.current?.querySelector<HTMLButtonElement>(`li[data-source="${current.n}"] button`);
    button?.closest('li')?.scrollIntoView({ block: 'center' });
    button?.focus({ preventScroll: true });
  }, [current]);

  const shown = showLess ? [...listed, ...less].sort((a, b) => a.n - b.n) : listed;
  return (
    <section class="sources" aria-label={t('sources.label')} ref={box}>
      <details open={open} onToggle={(e) => setOpen(e.currentTarget.open)}>
        <summary>Sources ({listed.length})</summary>
        <ol>
          {shown.map(({ n, source: s }) => (
            <li key={n} data-source={n} class={current?.n === n ? 'current' : undefined}>
              <span class="source-n" aria-hidden="true">
                [{n}]
              </span>
              <div class="source-body">
                <button
                  type="button"
                  class="link-button"
                  onClick={() => onShow(s)}
                  aria-label={t('sources.show', { n, name: s.filename ?? t('sources.entryContextLower') })}
                >
                  {s.filename ?? t('sources.entryContext')}
                </button>
                <span class="score" title={t('sources.score')}>
                  {formatDecimal(s.score, 2)}
                </span>
                <p class="excerpt">{s.excerpt}</p>
              </div>
            </li>
          ))}
        </ol>
        {less.length > 0 && !showLess && (
          <button type="button" class="ghost small" onClick={() => setShowLess(true)}>
            {t('sources.showLess', { count: less.length })}
          </button>
        )}
      </details>
    </section>
  );
});
