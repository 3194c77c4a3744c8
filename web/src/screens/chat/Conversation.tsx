/**
 * The message list: finished messages (memoised, never re-rendered while an answer streams), the
 * live answer (the only part that re-renders per frame), auto-scroll that follows new text only
 * while the reader is at the bottom, and a "Jump to latest" button otherwise. Long threads render
 * their last messages first and earlier ones as the reader scrolls up (each step a short task).
 */
import { memo } from 'preact/compat';
import { useCallback, useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import type { Source } from '../../api/client';
import { copyCodeOnClick } from '../../lib/markdown';
import { useLive, type LiveAnswer } from './live';
import { MessageView } from './MessageView';
import type { ChatItem } from './types';

const PAGE = 15;
const NEAR_BOTTOM_PX = 48;

interface Props {
  items: ChatItem[];
  live: LiveAnswer;
  modelName: (id: string | null) => string | null;
  onShowSource: (s: Source) => void;
  /** Ask again after a failed last answer (shown as its Retry button); absent while an answer streams. */
  onRetry?: (() => void) | undefined;
  /** Changes when the conversation is replaced (another thread): scroll to its end. */
  resetKey: string;
  /** Changes when the user sends: follow the answer even if they had scrolled up. */
  followKey: number;
  empty?: preact.ComponentChildren;
  footer?: preact.ComponentChildren;
  /** Show this message (a search result): rendered, scrolled to and highlighted briefly; `n` tells one request from the next. */
  focus?: { id: string; n: number } | null;
}

const FinishedMessages = memo(function FinishedMessages({ items, modelName, onShowSource, onRetry }: Pick<Props, 'items' | 'modelName' | 'onShowSource' | 'onRetry'>) {
  return (
    <>
      {items.map((m, i) => (
        <MessageView key={m.key} item={m} modelName={modelName} onShowSource={onShowSource} onRetry={i === items.length - 1 && m.status === 'error' ? onRetry : undefined} />
      ))}
    </>
  );
});

function LiveMessage({ live, modelName, onShowSource, onGrow }: Pick<Props, 'live' | 'modelName' | 'onShowSource'> & { onGrow: () => void }) {
  const item = useLive(live);
  useLayoutEffect(onGrow, [item, onGrow]);
  return item ? <MessageView item={item} modelName={modelName} onShowSource={onShowSource} /> : null;
}

export function Conversation({ items, live, modelName, onShowSource, onRetry, resetKey, followKey, empty, footer, focus }: Props) {
  const scroller = useRef<HTMLDivElement>(null);
  const top = useRef<HTMLDivElement>(null);
  const atBottom = useRef(true);
  const [showJump, setShowJump] = useState(false);
  const [shown, setShown] = useState(PAGE);

  const toBottom = useCallback(() => {
    const el = scroller.current;
    if (el) el.scrollTop = el.scrollHeight;
    atBottom.current = true;
    setShowJump(false);
  }, []);
  const follow = useCallback(() => {
    if (atBottom.current) toBottom();
    else setShowJump(true);
  }, [toBottom]);

  useLayoutEffect(() => {
    setShown(PAGE);
    toBottom();
  }, [resetKey, toBottom]);
  useLayoutEffect(toBottom, [followKey, toBottom]);
  useLayoutEffect(follow, [items.length, follow]);

  const focused = useRef(0);
  useLayoutEffect(() => {
    if (!focus || focused.current === focus.n) return;
    const i = items.findIndex((m) => m.key === focus.id);
    if (i < 0) return;
    // render from that message on first (the next layout pass scrolls to it)
    if (shown < items.length - i) return setShown(items.length - i);
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
  }, [focus, items, shown]);

  // Earlier messages come in when the top of the list scrolls into view; the browser's scroll
  // anchoring keeps what the reader looks at in place.
  useEffect(() => {
    const el = top.current;
    if (!el || shown >= items.length) return;
    const io = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting)) setShown((n) => n + PAGE);
    }, { root: scroller.current });
    io.observe(el);
    return () => io.disconnect();
  }, [shown, items.length]);

  const visible = shown >= items.length ? items : items.slice(items.length - shown);
  return (
    <div class="conversation-wrap">
      <div
        class="conversation"
        ref={scroller}
        role="log"
        aria-label="Conversation"
        aria-live="polite"
        onScroll={(e) => {
          const el = e.currentTarget;
          atBottom.current = el.scrollHeight - el.scrollTop - el.clientHeight < NEAR_BOTTOM_PX;
          if (atBottom.current) setShowJump(false);
        }}
        onClick={copyCodeOnClick}
      >
        <div class="messages">
          {visible.length < items.length && (
            <div ref={top} class="earlier">
              <button type="button" class="ghost small" onClick={() => setShown((n) => n + PAGE)}>
                Show earlier messages ({items.length - visible.length})
              </button>
            </div>
          )}
          {items.length === 0 && empty}
          <FinishedMessages items={visible} modelName={modelName} onShowSource={onShowSource} onRetry={onRetry} />
          <LiveMessage live={live} modelName={modelName} onShowSource={onShowSource} onGrow={follow} />
          {footer}
        </div>
      </div>
      {showJump && (
        <button type="button" class="jump" onClick={toBottom}>
          Jump to latest
        </button>
      )}
    </div>
  );
}
