/**
 * The message list: finished messages (memoised, never re-rendered while an answer streams), the
 * live answer (the only part that re-renders per frame), and scrolling:
 * - a thread opens at its end; earlier messages are fetched page by page when the top of the list
 *   comes into view (or on the "Show earlier messages" button), and the reader's place is kept
 *   while they are added above;
 * - after a send, the view follows the new answer until its start reaches the top of the window,
 *   so a long answer is read from its beginning; a reader who scrolls takes over;
 * - otherwise new text is followed only while the reader is at the bottom, with a "Jump to
 *   latest" button when they are not.
 */
import { memo } from 'preact/compat';
import { useCallback, useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import type { Source } from '../../api/client';
import { copyCodeOnClick } from '../../lib/markdown';
import { useLive, type LiveAnswer } from './live';
import type { MessageActionHandlers } from './MessageActions';
import { MessageView } from './MessageView';
import type { ChatItem } from './types';
import { t } from '../../i18n';

const NEAR_BOTTOM_PX = 48;
/** How much of the question stays in view above a new answer whose start is pinned to the top. */
const ABOVE_ANSWER_PX = 56;

interface Props {
  items: ChatItem[];
  live: LiveAnswer;
  modelName: (id: string | null) => string | null;
  onShowSource: (s: Source) => void;
  /** Ask again after a failed last answer (shown as its Retry button); absent while an answer streams. */
  onRetry?: (() => void) | undefined;
  /** Edit a question, page through versions (absent while an answer streams). */
  actions?: MessageActionHandlers | undefined;
  /** Whether the thread has messages older than the first of `items`. */
  hasEarlier: boolean;
  /** Fetches the page before the first of `items`; resolves to the call that adds it to `items` (null: nothing to add). */
  onLoadEarlier: () => Promise<(() => void) | null>;
  /** Changes when the conversation is replaced (another thread): scroll to its end. */
  resetKey: string;
  /** Changes when the user sends: follow the answer even if they had scrolled up. */
  followKey: number;
  empty?: preact.ComponentChildren;
  footer?: preact.ComponentChildren;
  /** Show this message (a search result): rendered, scrolled to and highlighted briefly; `n` tells one request from the next. */
  focus?: { id: string; n: number } | null;
}

const FinishedMessages = memo(function FinishedMessages({
  items,
  modelName,
  onShowSource,
  onRetry,
  actions,
}: Pick<Props, 'items' | 'modelName' | 'onShowSource' | 'onRetry' | 'actions'>) {
  return (
    <>
      {items.map((m, i) => (
        <MessageView
          key={m.key}
          item={m}
          modelName={modelName}
          onShowSource={onShowSource}
          onRetry={i === items.length - 1 && m.status === 'error' ? onRetry : undefined}
          actions={actions}
        />
      ))}
    </>
  );
});

function LiveMessage({ live, modelName, onShowSource, onGrow }: Pick<Props, 'live' | 'modelName' | 'onShowSource'> & { onGrow: () => void }) {
  const item = useLive(live);
  useLayoutEffect(onGrow, [item, onGrow]);
  return item ? <MessageView item={item} modelName={modelName} onShowSource={onShowSource} /> : null;
}

export function Conversation({
  items,
  live,
  modelName,
  onShowSource,
  onRetry,
  actions,
  hasEarlier,
  onLoadEarlier,
  resetKey,
  followKey,
  empty,
  footer,
  focus,
}: Props) {
  const scroller = useRef<HTMLDivElement>(null);
  const top = useRef<HTMLDivElement>(null);
  const atBottom = useRef(true);
  /** Set by a send: keep the new answer's start in view (until the reader scrolls). */
  const pinAnswer = useRef(false);
  /** The scroll position this component set last (a scroll event elsewhere is the reader's). */
  const setTop = useRef(-1);
  /** Where the first message stood in the window before earlier messages were added above it. */
  const before = useRef<{ key: string; offset: number } | null>(null);
  const [showJump, setShowJump] = useState(false);
  const [loading, setLoading] = useState(false);

  const scrollTo = useCallback((y: number) => {
    const el = scroller.current;
    if (!el) return;
    el.scrollTop = y;
    setTop.current = el.scrollTop;
    atBottom.current = el.scrollHeight - el.scrollTop - el.clientHeight < NEAR_BOTTOM_PX;
    setShowJump(!atBottom.current);
  }, []);
  const toBottom = useCallback(() => {
    const el = scroller.current;
    if (el) scrollTo(el.scrollHeight);
  }, [scrollTo]);

  /** Where the newest answer should sit: its start near the top, or the end when it is short. */
  const answerStart = useCallback((): number | null => {
    const el = scroller.current;
    const answers = el?.querySelectorAll<HTMLElement>('article.message.assistant');
    const answer = answers?.[answers.length - 1];
    if (!el || !answer) return null;
    const offset = answer.getBoundingClientRect().top - el.getBoundingClientRect().top + el.scrollTop;
    return Math.min(el.scrollHeight - el.clientHeight, Math.max(0, offset - ABOVE_ANSWER_PX));
  }, []);

  const follow = useCallback(() => {
    if (pinAnswer.current) {
      const y = answerStart();
      if (y !== null) return scrollTo(y);
    }
    if (atBottom.current) toBottom();
    else setShowJump(true);
  }, [answerStart, scrollTo, toBottom]);

  useLayoutEffect(() => {
    pinAnswer.current = false;
    toBottom();
  }, [resetKey, toBottom]);
  useLayoutEffect(() => {
    if (followKey === 0) return;
    pinAnswer.current = true;
    toBottom();
  }, [followKey, toBottom]);
  const lastKey = items.at(-1)?.key;
  useLayoutEffect(follow, [lastKey, follow]);

  const focused = useRef(0);
  useLayoutEffect(() => {
    if (!focus || focused.current === focus.n) return;
    const i = items.findIndex((m) => m.key === focus.id);
    if (i < 0) return;
    const el = scroller.current?.querySelector<HTMLElement>(`[data-message-id="${CSS.escape(focus.id)}"]`);
    if (!el) return;
    focused.current = focus.n;
    atBottom.current = false;
    el.scrollIntoView({ block: 'center' });
    el.setAttribute('tabindex', '-1');
    el.focus({ preventScroll: true });
    el.classList.remove('flash');
    void el.offsetWidth; // restart the animation for a second visit
    el.classList.add('flash');
  }, [focus, items]);

  const firstKey = items[0]?.key;
  const offsetOf = useCallback((key: string, list: ChatItem[]): number | null => {
    const el = scroller.current;
    const i = list.findIndex((m) => m.key === key);
    const article = i < 0 ? undefined : el?.querySelectorAll<HTMLElement>('.messages > article.message')[i];
    return el && article ? article.getBoundingClientRect().top - el.getBoundingClientRect().top : null;
  }, []);
  // Earlier messages were added above: put what the reader looked at back where it was. The
  // browser's own scroll anchoring is off meanwhile, so that it does not move it a second time
  // (it stays on otherwise: messages off screen take their real height as they come into view).
  useLayoutEffect(() => {
    const b = before.current;
    const el = scroller.current;
    if (!b || !el || b.key === firstKey) return;
    before.current = null;
    const now = offsetOf(b.key, items);
    if (now !== null) scrollTo(el.scrollTop + (now - b.offset));
    requestAnimationFrame(() => el.style.removeProperty('overflow-anchor'));
  }, [firstKey, items, offsetOf, scrollTo]);

  const loadEarlier = useCallback(() => {
    if (loading || !hasEarlier || !firstKey) return;
    setLoading(true);
    onLoadEarlier()
      .then((add) => {
        const offset = offsetOf(firstKey, items);
        if (add && offset !== null) {
          before.current = { key: firstKey, offset };
          scroller.current?.style.setProperty('overflow-anchor', 'none');
        }
        add?.();
      })
      .catch(() => undefined)
      .finally(() => setLoading(false));
  }, [loading, hasEarlier, onLoadEarlier, firstKey, items, offsetOf]);

  // The top of the list in view (or near it) fetches the page before it.
  useEffect(() => {
    const el = top.current;
    if (!el || !hasEarlier || loading) return;
    const io = new IntersectionObserver((entries) => entries.some((e) => e.isIntersecting) && loadEarlier(), {
      root: scroller.current,
      rootMargin: '300px 0px 0px 0px',
    });
    io.observe(el);
    return () => io.disconnect();
  }, [hasEarlier, loading, loadEarlier, firstKey]);

  return (
    <div class="conversation-wrap">
      <div
        class="conversation"
        ref={scroller}
        role="log"
        aria-label={t('conversation.label')}
        aria-live="polite"
        aria-busy={loading}
        onScroll={(e) => {
          const el = e.currentTarget;
          if (Math.abs(el.scrollTop - setTop.current) > 2) pinAnswer.current = false;
          atBottom.current = el.scrollHeight - el.scrollTop - el.clientHeight < NEAR_BOTTOM_PX;
          if (atBottom.current) setShowJump(false);
        }}
        onClick={copyCodeOnClick}
      >
        <div class="messages">
          {hasEarlier && (
            <div ref={top} class="earlier">
              <button type="button" class="ghost small" onClick={loadEarlier} disabled={loading}>
                {loading ? t('conversation.loadingEarlier') : t('conversation.showEarlier')}
              </button>
            </div>
          )}
          {items.length === 0 && empty}
          <FinishedMessages items={items} modelName={modelName} onShowSource={onShowSource} onRetry={onRetry} actions={actions} />
          <LiveMessage live={live} modelName={modelName} onShowSource={onShowSource} onGrow={follow} />
          {footer}
        </div>
      </div>
      {showJump && (
        <button type="button" class="jump" onClick={toBottom}>
          {t('conversation.jump')}
        </button>
      )}
    </div>
  );
}
