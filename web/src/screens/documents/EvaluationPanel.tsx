/**
 * The document set's evaluation set: questions people ask, each with the passage of the documents
 * that answers it; "Run" searches each question as a chat would and shows where the passage came,
 * in words first ("Found the right passage in the top 5 for 7 of 9 questions"), the measures
 * (recall@5, MRR@10, nDCG@10) beside them. Who may change the set (the creator, a team
 * owner/admin) adds, edits, removes and runs; others read the set and its last run.
 */
import { useState } from 'preact/hooks';
import { api, data } from '../../api/client';
import type { paths } from '../../api/openapi';
import { ConfirmButton } from '../../components/ConfirmButton';
import { formatDate } from '../../components/format';
import { ErrorNote } from '../../components/Problem';
import { useLoad } from '../../components/useLoad';
import { useSubmit } from '../../components/useSubmit';

type Evaluation = paths['/api/v1/plus/{plusId}/evaluation']['get']['responses'][200]['content']['application/json'];
type EvalQuestion = Evaluation['questions'][number];
type EvalRun = NonNullable<Evaluation['lastRun']>;
type EvalResult = EvalRun['results'][number];

const ordinal = (n: number) => `${n}${n % 10 === 1 && n !== 11 ? 'st' : n % 10 === 2 && n !== 12 ? 'nd' : n % 10 === 3 && n !== 13 ? 'rd' : 'th'}`;
const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** A question's line of the last run, in words. */
function resultWords(r: EvalResult | undefined, q: EvalQuestion): { text: string; tone: 'good' | 'fair' | 'bad' | 'none' } {
  if (!r) return { text: 'Not run yet', tone: 'none' };
  if (r.question !== q.question || r.passage !== q.passage) return { text: 'Changed since the last run', tone: 'none' };
  if (r.matchingChunks === 0) return { text: 'The documents do not contain this passage (check its wording)', tone: 'bad' };
  if (r.rank === null) return { text: 'Not in the top 10', tone: 'bad' };
  if (r.rank === 1) return { text: 'Found first', tone: 'good' };
  return { text: `Found ${ordinal(r.rank)}`, tone: r.rank <= 5 ? 'good' : 'fair' };
}

function RunSummary({ run }: { run: EvalRun }) {
  const missing = run.results.filter((r) => r.matchingChunks === 0).length;
  return (
    <div class="eval-summary stack-tight" aria-label="Last run">
      <p class="eval-headline">
        Found the right passage in the top 5 for {run.foundInTop5} of {plural(run.questions, 'question')}.
      </p>
      {missing > 0 && <p class="small">{plural(missing, 'passage')} could not be found in the documents at all: check the wording against the files.</p>}
      <dl class="eval-figures">
        <div>
          <dt>Recall@5</dt>
          <dd>{run.recallAt5.toFixed(2)}</dd>
          <dd class="muted small">share of questions answered in the top 5</dd>
        </div>
        <div>
          <dt>MRR@10</dt>
          <dd>{run.mrrAt10.toFixed(2)}</dd>
          <dd class="muted small">1 when the passage always comes first</dd>
        </div>
        <div>
          <dt>nDCG@10</dt>
          <dd>{run.ndcgAt10.toFixed(2)}</dd>
          <dd class="muted small">how high the passage came, 1 at best</dd>
        </div>
      </dl>
      <p class="muted small">
        Last run {formatDate(run.ran)} with {run.method === 'hybrid' ? 'full-text and embedding search' : 'full-text search'}.
      </p>
    </div>
  );
}

function QuestionForm({
  initial,
  submitLabel,
  onSubmit,
  onCancel,
}: {
  initial?: EvalQuestion;
  submitLabel: string;
  onSubmit: (q: { question: string; passage: string }) => Promise<unknown>;
  onCancel?: () => void;
}) {
  const [question, setQuestion] = useState(initial?.question ?? '');
  const [passage, setPassage] = useState(initial?.passage ?? '');
  const submit = useSubmit();
  const ready = question.trim() !== '' && passage.trim() !== '';
  return (
    <form
      class="stack-tight eval-form"
      aria-label={initial ? 'Edit question' : 'Add a question'}
      onSubmit={submit.handler(() =>
        onSubmit({ question: question.trim(), passage: passage.trim() }).then(() => {
          if (!initial) {
            setQuestion('');
            setPassage('');
          }
        }),
      )}
    >
      <label>
        What someone asks
        <input
          value={question}
          maxLength={2000}
          required
          onInput={(e) => setQuestion(e.currentTarget.value)}
          placeholder="e.g. How many days of leave do I get?"
        />
      </label>
      <label>
        Passage that answers it
        <textarea rows={2} value={passage} maxLength={4000} required onInput={(e) => setPassage(e.currentTarget.value)} />
        <span class="hint">Copy a sentence or two from the documents. Spacing and capitals do not matter.</span>
      </label>
      <ErrorNote error={submit.error} />
      <div class="actions">
        <button type="submit" class={initial ? 'primary small-button' : 'primary'} disabled={submit.busy || !ready}>
          {submitLabel}
        </button>
        {onCancel && (
          <button type="button" class="small-button" onClick={onCancel}>
            Cancel
          </button>
        )}
      </div>
    </form>
  );
}

export function EvaluationPanel({ plusId }: { plusId: string }) {
  const path = { params: { path: { plusId } } };
  const ev = useLoad(() => data(api.GET('/api/v1/plus/{plusId}/evaluation', path)), [plusId]);
  const [editing, setEditing] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const run = useSubmit();
  const e = ev.value;
  if (!e) {
    return (
      <section class="card stack" aria-labelledby="eval-title">
        <h2 id="eval-title">Evaluation set</h2>
        {ev.error ? <ErrorNote error={ev.error} /> : <p class="loading">Loading…</p>}
      </section>
    );
  }
  const results = new Map((e.lastRun?.results ?? []).map((r) => [r.questionId, r]));
  const withQuestions = (questions: EvalQuestion[]) => ev.set({ ...e, questions });

  return (
    <section class="card stack eval-panel" aria-labelledby="eval-title">
      <div class="page-head">
        <h2 id="eval-title">Evaluation set</h2>
        {e.canEdit && (
          <form onSubmit={run.handler(() => data(api.POST('/api/v1/plus/{plusId}/evaluation/run', path)).then((lastRun) => ev.set({ ...e, lastRun })))}>
            <button type="submit" class="primary" disabled={run.busy || e.questions.length === 0} aria-busy={run.busy}>
              {run.busy ? 'Running…' : 'Run'}
            </button>
          </form>
        )}
      </div>
      <p class="muted small">
        Questions people ask of these documents, each with the passage that answers it. Run them to see whether search brings the right passage to a chat.
      </p>
      <ErrorNote error={run.error} />
      <ErrorNote error={error} />
      {e.lastRun ? <RunSummary run={e.lastRun} /> : e.questions.length > 0 && <p class="muted">Not run yet.</p>}

      {e.questions.length === 0 ? (
        <p class="muted">No question yet.</p>
      ) : (
        <ol class="eval-list" aria-label="Evaluation questions">
          {e.questions.map((q) => {
            const words = resultWords(results.get(q.id), q);
            return (
              <li key={q.id} class="eval-item">
                {editing === q.id ? (
                  <QuestionForm
                    initial={q}
                    submitLabel="Save"
                    onCancel={() => setEditing(null)}
                    onSubmit={(body) =>
                      data(api.PUT('/api/v1/plus/{plusId}/evaluation/questions/{questionId}', { params: { path: { plusId, questionId: q.id } }, body })).then(
                        (saved) => {
                          withQuestions(e.questions.map((x) => (x.id === q.id ? saved : x)));
                          setEditing(null);
                        },
                      )
                    }
                  />
                ) : (
                  <>
                    <div class="eval-text">
                      <strong>{q.question}</strong>
                      <blockquote class="small">{q.passage}</blockquote>
                      <span class={`eval-result ${words.tone}`}>{words.text}</span>
                    </div>
                    {e.canEdit && (
                      <div class="actions">
                        <button type="button" class="small-button" aria-label={`Edit question: ${q.question}`} onClick={() => setEditing(q.id)}>
                          Edit
                        </button>
                        <ConfirmButton
                          label="Delete"
                          what={`question: ${q.question}`}
                          onConfirm={() =>
                            data(
                              api.DELETE('/api/v1/plus/{plusId}/evaluation/questions/{questionId}', { params: { path: { plusId, questionId: q.id } } }),
                            ).then(() => withQuestions(e.questions.filter((x) => x.id !== q.id)), setError)
                          }
                        />
                      </div>
                    )}
                  </>
                )}
              </li>
            );
          })}
        </ol>
      )}

      {e.canEdit && e.questions.length < 100 && (
        <div class="eval-add stack-tight">
          <h3>Add a question</h3>
          <QuestionForm
            submitLabel="Add question"
            onSubmit={(body) =>
              data(api.POST('/api/v1/plus/{plusId}/evaluation/questions', { ...path, body })).then((added) => withQuestions([...e.questions, added]))
            }
          />
        </div>
      )}
    </section>
  );
}
