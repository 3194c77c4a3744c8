/**
 * "Search chats": a search box in the chats sidebar (also focused with Ctrl/Cmd+K) whose results
 * — title, snippet with the matched words marked, date — replace the thread list while it holds
 * text. Choosing a result opens its thread at the message.
 */
import { forwardRef } from 'preact/compat';
import { useEffect, useState } from 'preact/hooks';
import { api, data, type Schemas } from '../../api/client';
import { formatDate } from '../../components/format';
import { ErrorNote } from '../../components/Problem';
import { t } from '../../i18n';

/** As the typed client reads it (its fetch types read the [start, end] pairs as arrays). */
export type SearchHit = Omit<Schemas['ChatSearchHit'], 'highlights' | 'titleHighlights'> & { highlights: number[][]; titleHighlights: number[][] };

const DEBOUNCE_MS = 200;

/** Text with its [start, end) spans in <mark>: text nodes and elements, never parsed as HTML. */
export function Marked({ text, spans }: { text: string; spans: number[][] }) {
  const parts: preact.ComponentChildren[] = [];
  let at = 0;
  for (const [s = 0, e = 0] of [...spans].sort((a, b) => (a[0] ?? 0) - (b[0] ?? 0))) {
    if (s < at || e <= s || e > text.length) continue;
    if (s > at) parts.push(text.slice(at, s));
    parts.push(<mark key={s}>{text.slice(s, e)}</mark>);
    at = e;
  }
  if (at < text.length) parts.push(text.slice(at));
  return <>{parts}</>;
}

interface Props {
  query: string;
  onQuery: (q: string) => void;
  onPick: (hit: SearchHit) => void;
}

export const SearchBox = forwardRef<HTMLInputElement, Pick<Props, 'query' | 'onQuery'>>(function SearchBox({ query, onQuery }, ref) {
  return (
    <input
      ref={ref}
      type="search"
      class="search-chats"
      aria-label={t('search.label')}
      placeholder={t('search.placeholder')}
      value={query}
      onInput={(e) => onQuery(e.currentTarget.value)}
      onKeyDown={(e) => {
        if (e.key === 'Escape' && query) {
          e.preventDefault();
          e.stopPropagation();
          onQuery('');
        }
      }}
    />
  );
});

/** The results of a non-empty query (the latest query wins over slower earlier ones). */
export function SearchResults({ query, onPick }: Pick<Props, 'query' | 'onPick'>) {
  const [hits, setHits] = useState<SearchHit[] | null>(null);
  const [total, setTotal] = useState(0);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    let live = true;
    setError(null);
    const timer = setTimeout(() => {
      data(api.GET('/api/v1/chat/search', { params: { query: { q: query, size: 20 } } })).then(
        (page) => {
          if (!live) return;
          setHits(page.content);
          setTotal(page.totalElements);
        },
        (err: unknown) => live && setError(err),
      );
    }, DEBOUNCE_MS);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [query]);

  if (error) return <ErrorNote error={error} />;
  if (hits === null) return <p class="muted small">{t('search.searching')}</p>;
  return (
    <nav aria-label={t('search.results')}>
      <p class="muted small" role="status">
        {total === 0
          ? t('search.none')
          : total > hits.length
            ? t('search.countShown', { count: total, shown: hits.length })
            : t('search.count', { count: total })}
      </p>
      <ul class="search-results">
        {hits.map((h) => (
          <li key={h.threadId}>
            <button type="button" class="search-hit ghost" onClick={() => onPick(h)}>
              <span class="hit-title">
                <Marked text={h.title || t('threads.untitled')} spans={h.title ? h.titleHighlights : []} />
              </span>
              <span class="hit-snippet">
                <Marked text={h.snippet} spans={h.highlights} />
              </span>
              <span class="hit-date muted">{formatDate(h.created)}</span>
            </button>
          </li>
        ))}
      </ul>
    </nav>
  );
}
