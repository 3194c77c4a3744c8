/**
 * One message: Markdown body (its `[n]` citations as buttons that open source n), state marks
 * (interrupted, failed), and its sources, collapsed under the answer.
 */
import { memo } from 'preact/compat';
import { useMemo, useRef } from 'preact/hooks';
import type { Source } from '../../api/client';
import { Markdown } from '../../components/Markdown';
import { decorateAnswer } from '../../lib/answer-html';
import { citedNumbers } from '../../lib/citations';
import { problemWords } from '../../lib/problem-words';
import { EditableQuestion, VersionPager, type MessageActionHandlers } from './MessageActions';
import { MessageImages } from './MessageImages';
import { SourceList } from './SourceList';
import { StreamingMarkdown } from './StreamingMarkdown';
import { ToolCalls } from './ToolCalls';
import type { ChatItem } from './types';
import { t } from '../../i18n';

interface Props {
  item: ChatItem;
  modelName: (id: string | null) => string | null;
  onShowSource: (s: Source) => void;
  /** Set on the conversation's last answer when it failed: ask the same question again. */
  onRetry?: (() => void) | undefined;
  /** Edit and version paging (absent while an answer streams, and on the live answer). */
  actions?: MessageActionHandlers | undefined;
}

function problemText(item: ChatItem): string {
  return item.problem ? problemWords(item.problem).text : t('message.failed');
}

export function MessageBody({ item, onShowSource, modelName, onRetry, actions }: Props) {
  const streaming = item.status === 'streaming';
  const { sources } = item;
  const decorate = useMemo(
    () => (root: DocumentFragment) => decorateAnswer(root, sources.length, (n) => sources[n - 1]?.filename ?? t('sources.entryContextLower')),
    [sources],
  );
  const cited = useMemo(
    () => (item.role === 'assistant' && sources.length ? citedNumbers(item.content, sources.length) : []),
    [item.content, item.role, sources],
  );
  const list = useRef<{ open(n: number): void }>(null);
  const model = item.role === 'assistant' ? modelName(item.modelId) : null;
  const onCite = (e: MouseEvent) => {
    const n = Number((e.target as Element | null)?.closest?.('button.cite')?.getAttribute('data-cite'));
    if (n) list.current?.open(n);
  };
  return (
    <article
      class={`message ${item.role} ${item.status}`}
      aria-label={item.role === 'user' ? t('message.yours') : t('message.answer')}
      data-status={item.status}
      data-message-id={item.key}
      onClick={onCite}
    >
      {(model || (item.role === 'assistant' && (item.versions?.count ?? 1) > 1)) && (
        <div class="message-meta">
          {model}
          <VersionPager item={item} actions={actions} />
        </div>
      )}
      {item.toolCalls && item.toolCalls.length > 0 && <ToolCalls calls={item.toolCalls} />}
      {item.role === 'user' && <MessageImages images={item.images ?? []} previews={item.previews} generated={false} />}
      {item.role === 'user' ? (
        <EditableQuestion item={item} actions={actions} />
      ) : streaming ? (
        <StreamingMarkdown text={item.content} />
      ) : (
        <Markdown class="markdown" text={item.content} highlight decorate={decorate} />
      )}
      {item.role === 'assistant' && <MessageImages images={item.images ?? []} generated />}
      {streaming && item.content === '' && !item.images?.length && (
        <p class="muted typing" aria-label={t('message.waiting')}>
          …
        </p>
      )}
      {item.status === 'interrupted' && <p class="mark interrupted">{t('message.interrupted')}</p>}
      {item.status === 'error' && (
        <div class="mark failed">
          <p role="alert">{problemText(item)}</p>
          {onRetry && (
            <button type="button" class="small" onClick={onRetry}>
              {t('message.retry')}
            </button>
          )}
        </div>
      )}
      {sources.length > 0 && <SourceList ref={list} sources={sources} cited={cited} onShow={onShowSource} />}
    </article>
  );
}

/** A finished message never re-renders unless it changes. */
export const MessageView = memo(
  MessageBody,
  (a, b) => a.item === b.item && a.modelName === b.modelName && a.onShowSource === b.onShowSource && a.onRetry === b.onRetry && a.actions === b.actions,
);
