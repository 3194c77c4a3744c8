/**
 * A shared chat (`/share/<token>`), read-only and opened without signing in: the thread as it was
 * when shared, its answers' Markdown through the same sanitising renderer as the chat, sources by
 * file name only (the server names only those every member of the team reads).
 */
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, data } from '../api/client';
import type { components } from '../api/openapi';
import { Markdown } from '../components/Markdown';
import { formatDate } from '../components/format';
import { ErrorNote } from '../components/Problem';
import { t } from '../i18n';

type Shared = components['schemas']['SharedThread'];

export function SharedThreadScreen({ token }: { token: string }) {
  const [thread, setThread] = useState<Shared | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    data(api.GET('/api/v1/share/{token}', { params: { path: { token } } })).then(setThread, setError);
  }, [token]);
  useEffect(() => {
    if (thread) document.title = `${thread.title} · Atrium`;
  }, [thread]);

  if (error)
    return (
      <main class="shared-thread">
        <h1>{t('shared.gone')}</h1>
        <p>{t('shared.goneWhy')}</p>
        <ErrorNote error={error instanceof ApiError && error.problem.status === 404 ? null : error} />
      </main>
    );
  if (!thread)
    return (
      <p class="loading" aria-busy="true">
        {t('common.loading')}
      </p>
    );
  return (
    <main class="shared-thread">
      <header>
        <h1>{thread.title}</h1>
        <p class="small muted">{t('shared.note', { when: formatDate(thread.created) })}</p>
      </header>
      {thread.messages.map((m) => (
        <article key={m.id} class={`message ${m.role} ${m.status}`} aria-label={m.role === 'user' ? t('shared.question') : t('message.answer')}>
          {m.modelName && <div class="message-meta">{m.modelName}</div>}
          {m.role === 'user' ? <div class="user-text">{m.content}</div> : <Markdown class="markdown" text={m.content} highlight />}
          {m.status === 'error' && <p class="mark failed">{t('shared.failed')}</p>}
          {m.status === 'interrupted' && <p class="mark interrupted">{t('message.interrupted')}</p>}
          {m.sources.length > 0 && (
            <ol class="shared-sources" aria-label={t('sources.label')}>
              {m.sources.map((s, i) => (
                <li key={i}>{s.filename ?? t('shared.hiddenSource')}</li>
              ))}
            </ol>
          )}
        </article>
      ))}
    </main>
  );
}
