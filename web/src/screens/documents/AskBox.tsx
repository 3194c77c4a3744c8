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
      <h2 id="ask-title">Test a question</h2>
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
          Question
          <input value={q} maxLength={100000} onInput={(e) => setQ(e.currentTarget.value)} placeholder="What would someone ask?" />
        </label>
        <button type="submit" class="primary" disabled={busy || !q.trim()}>
          Show context
        </button>
      </form>
      <ErrorNote error={error} />
      {answer && (
        <div class="stack" aria-label="Context for the question">
          {answer.explain && (
            <TableWrap label="Ranked chunks">
              <table class="table ranked" aria-label="Ranked chunks">
                <thead>
                  <tr>
                    <th scope="col">#</th>
                    <th scope="col">Score</th>
                    <th scope="col">File</th>
                    <th scope="col">Tokens</th>
                    <th scope="col">In context</th>
                    <th scope="col">Excerpt</th>
                  </tr>
                </thead>
                <tbody>
                  {answer.explain.results.map((r) => (
                    <tr key={r.chunkId}>
                      <td>{r.rank}</td>
                      <td>{r.score.toFixed(3)}</td>
                      <td>{r.filename}</td>
                      <td>{r.tokenSize}</td>
                      <td>{r.used ? 'yes' : 'no'}</td>
                      <td class="excerpt">{r.excerpt}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableWrap>
          )}
          <h3 class="small">What a chat receives</h3>
          {answer.content ? (
            <pre class="context-text">{answer.content}</pre>
          ) : (
            <p class="muted">Nothing: the document set has no context text and no chunk matched.</p>
          )}
        </div>
      )}
    </section>
  );
}
