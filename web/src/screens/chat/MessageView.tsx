/** One message: Markdown body, state marks (interrupted, failed), and its sources. */
import { memo } from 'preact/compat';
import type { Source } from '../../api/client';
import { Markdown } from '../../components/Markdown';
import { problemWords } from '../../lib/problem-words';
import { StreamingMarkdown } from './StreamingMarkdown';
import type { ChatItem } from './types';

interface Props {
  item: ChatItem;
  modelName: (id: string | null) => string | null;
  onShowSource: (s: Source) => void;
  /** Set on the conversation's last answer when it failed: ask the same question again. */
  onRetry?: (() => void) | undefined;
}

function problemText(item: ChatItem): string {
  return item.problem ? problemWords(item.problem).text : 'The answer failed.';
}

export function MessageBody({ item, onShowSource, modelName, onRetry }: Props) {
  const streaming = item.status === 'streaming';
  const model = item.role === 'assistant' ? modelName(item.modelId) : null;
  return (
    <article class={`message ${item.role} ${item.status}`} aria-label={item.role === 'user' ? 'Your message' : 'Answer'} data-status={item.status} data-message-id={item.key}>
      {model && <div class="message-meta">{model}</div>}
      {item.role === 'user' ? (
        <div class="user-text">{item.content}</div>
      ) : streaming ? (
        <StreamingMarkdown text={item.content} />
      ) : (
        <Markdown class="markdown" text={item.content} highlight />
      )}
      {streaming && item.content === '' && <p class="muted typing" aria-label="Waiting for the answer">…</p>}
      {item.status === 'interrupted' && <p class="mark interrupted">Interrupted: the answer was stopped before it finished.</p>}
      {item.status === 'error' && (
        <div class="mark failed">
          <p role="alert">{problemText(item)}</p>
          {onRetry && (
            <button type="button" class="small" onClick={onRetry}>
              Retry
            </button>
          )}
        </div>
      )}
      {item.sources.length > 0 && (
        <section class="sources" aria-label="Sources">
          <h3>Sources</h3>
          <ol>
            {item.sources.map((s, i) => (
              <li key={`${s.plusId}-${s.chunkId ?? i}`}>
                <button type="button" class="link-button" onClick={() => onShowSource(s)} aria-label={`Show source ${i + 1}: ${s.filename ?? 'context'}`}>
                  {s.filename ?? 'Entry context'}
                </button>
                <span class="score" title="relevance score">
                  {s.score.toFixed(2)}
                </span>
                <p class="excerpt">{s.excerpt}</p>
              </li>
            ))}
          </ol>
        </section>
      )}
    </article>
  );
}

/** A finished message never re-renders unless it changes. */
export const MessageView = memo(MessageBody, (a, b) => a.item === b.item && a.modelName === b.modelName && a.onShowSource === b.onShowSource && a.onRetry === b.onRetry);
