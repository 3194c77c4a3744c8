/**
 * "Test a question": what context-for-prompt gives a chat for a question, so a person sees why an
 * answer cited what it cited. It asks for the ranked chunks with their scores (`explain`); a server
 * without that option answers the plain context, which is shown alone.
 */
import { useState } from 'preact/hooks';
import { ApiError } from '../../api/client';
import { sendJson } from '../../components/json';
import { ErrorNote } from '../../components/Problem';
import { TableWrap } from '../../components/TableWrap';
import { formatDecimal } from '../../components/format';
import { t } from '../../i18n';

interface ExplainResult {
  rank: number;
  score: number;
  chunkId: number;
  filename: string;
  heading?: string | null;
  tokenSize: number;
  used: boolean;
  excerpt: string;
}
interface Answer {
  content: string;
  explain?: { method: string; results: ExplainResult[] };
}

async function ask(plusId: string, content: string): Promise<Answer> {
  const url = `/api/v1/plus/${encodeURIComponent(plusId)}/context-for-prompt`;
  try {
    return await sendJson<Answer>('POST', url, { content, explain: true });
  } catch (err) {
    // a server that does not know `explain` refuses the field: ask again without it
    if (err instanceof ApiError && err.status === 400 && err.problem.errors?.some((e) => /explain|additional propert/.test(`${e.path} ${e.message}`))) {
      return sendJson<Answer>('POST', url, { content });
    }
    throw err;
  }
}

export function AskBox({ plusId }: { plusId: string }) {
  const [q, setQ] = useState('');
  const [answer, setAnswer] = useState<Answer | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  return (
    <section class="card stack" aria-labelledby="ask-title">
      <h2 id="ask-title">{t('ask.title')}</h2>
      <form
        class="ask-form"
        onSubmit={(e) => {
          e.preventDefault();
          if (!q.trim()) return;
          setBusy(true);
          setError(null);
          ask(plusId, q.trim())
            .then(setAnswer, setError)
            .finally(() => setBusy(false));
        }}
      >
        <label class="grow">
          {t('shared.question')}
          <input value={q} maxLength={100000} onInput={(e) => setQ(e.currentTarget.value)} placeholder={t('ask.placeholder')} />
        </label>
        <button type="submit" class="primary" disabled={busy || !q.trim()}>
          {t('ask.show')}
        </button>
      </form>
      <ErrorNote error={error} />
      {answer && (
        <div class="stack" aria-label={t('ask.context')}>
          {answer.explain && (
            <TableWrap label={t('ask.ranked')}>
              <table class="table ranked" aria-label={t('ask.ranked')}>
                <thead>
                  <tr>
                    <th scope="col">#</th>
                    <th scope="col">{t('ask.col.score')}</th>
                    <th scope="col">{t('ask.col.file')}</th>
                    <th scope="col">{t('ask.col.tokens')}</th>
                    <th scope="col">{t('ask.col.inContext')}</th>
                    <th scope="col">{t('ask.col.excerpt')}</th>
                  </tr>
                </thead>
                <tbody>
                  {answer.explain.results.map((r) => (
                    <tr key={r.chunkId}>
                      <td>{r.rank}</td>
                      <td>{formatDecimal(r.score, 3)}</td>
                      <td>{r.filename}</td>
                      <td>{r.tokenSize}</td>
                      <td>{r.used ? t('ask.used') : t('ask.unused')}</td>
                      <td class="excerpt">{r.excerpt}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableWrap>
          )}
          <h3 class="small">{t('ask.receives')}</h3>
          {answer.content ? <pre class="context-text">{answer.content}</pre> : <p class="muted">{t('ask.nothing')}</p>}
        </div>
      )}
    </section>
  );
}
