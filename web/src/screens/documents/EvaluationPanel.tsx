/**
 * The document set's evaluation set: questions people ask, each with the passage of the documents
 * that answers it; "Run" searches each question as a chat would and shows where the passage came,
 * in words first ("Found the right passage in the top 5 for 7 of 9 questions"), the measures
 * (recall@5, MRR@10, nDCG@10) beside them. Who may change the set (the creator, a team
 * owner/admin) adds, edits, removes and runs; others read the set and its last run. Its words are
 * the catalogues' `eval.*` texts, its figures written in the language spoken.
 */
import { useState } from 'preact/hooks';
import { api, data } from '../../api/client';
import type { paths } from '../../api/openapi';
import { ConfirmButton } from '../../components/ConfirmButton';
import { formatDate } from '../../components/format';
import { locale, t } from '../../i18n';
import { ErrorNote } from '../../components/Problem';
import { useLoad } from '../../components/useLoad';
import { useSubmit } from '../../components/useSubmit';

type Evaluation = paths['/api/v1/plus/{plusId}/evaluation']['get']['responses'][200]['content']['application/json'];
type EvalQuestion = Evaluation['questions'][number];
type EvalRun = NonNullable<Evaluation['lastRun']>;
type EvalResult = EvalRun['results'][number];

/** A measure between 0 and 1 with two decimals, in the language spoken ("0.67", "0,67"). */
const measure = (n: number) => n.toLocaleString(locale(), { minimumFractionDigits: 2, maximumFractionDigits: 2 });

/** A question's line of the last run, in words. */
function resultWords(r: EvalResult | undefined, q: EvalQuestion): { text: string; tone: 'good' | 'fair' | 'bad' | 'none' } {
  if (!r) return { text: t('eval.notRunYet'), tone: 'none' };
  if (r.question !== q.question || r.passage !== q.passage) return { text: t('eval.changed'), tone: 'none' };
  if (r.matchingChunks === 0) return { text: t('eval.notContained'), tone: 'bad' };
  if (r.rank === null) return { text: t('eval.notInTop10'), tone: 'bad' };
  if (r.rank === 1) return { text: t('eval.foundFirst'), tone: 'good' };
  return { text: t('eval.foundAt', { ordinal: r.rank }), tone: r.rank <= 5 ? 'good' : 'fair' };
}

function RunSummary({ run }: { run: EvalRun }) {
  const missing = run.results.filter((r) => r.matchingChunks === 0).length;
  return (
    <div class="eval-summary stack-tight" aria-label={t('eval.lastRun')}>
      <p class="eval-headline">{t('eval.headline', { found: run.foundInTop5, count: run.questions })}</p>
      {missing > 0 && <p class="small">{t('eval.missing', { count: missing })}</p>}
      <dl class="eval-figures">
        <div>
          <dt>{t('eval.recall')}</dt>
          <dd>{measure(run.recallAt5)}</dd>
          <dd class="muted small">{t('eval.recallHint')}</dd>
        </div>
        <div>
          <dt>{t('eval.mrr')}</dt>
          <dd>{measure(run.mrrAt10)}</dd>
          <dd class="muted small">{t('eval.mrrHint')}</dd>
        </div>
        <div>
          <dt>{t('eval.ndcg')}</dt>
          <dd>{measure(run.ndcgAt10)}</dd>
          <dd class="muted small">{t('eval.ndcgHint')}</dd>
        </div>
      </dl>
      <p class="muted small">
        {run.method === 'hybrid' ? t('eval.ranHybrid', { when: formatDate(run.ran) }) : t('eval.ranText', { when: formatDate(run.ran) })}
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
      aria-label={initial ? t('eval.editForm') : t('eval.addForm')}
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
        {t('eval.question')}
        <input value={question} maxLength={2000} required onInput={(e) => setQuestion(e.currentTarget.value)} placeholder={t('eval.questionExample')} />
      </label>
      <label>
        {t('eval.passage')}
        <textarea rows={2} value={passage} maxLength={4000} required onInput={(e) => setPassage(e.currentTarget.value)} />
        <span class="hint">{t('eval.passageHint')}</span>
      </label>
      <ErrorNote error={submit.error} />
      <div class="actions">
        <button type="submit" class={initial ? 'primary small-button' : 'primary'} disabled={submit.busy || !ready}>
          {submitLabel}
        </button>
        {onCancel && (
          <button type="button" class="small-button" onClick={onCancel}>
            {t('common.cancel')}
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
        <h2 id="eval-title">{t('eval.title')}</h2>
        {ev.error ? <ErrorNote error={ev.error} /> : <p class="loading">{t('common.loading')}</p>}
      </section>
    );
  }
  const results = new Map((e.lastRun?.results ?? []).map((r) => [r.questionId, r]));
  const withQuestions = (questions: EvalQuestion[]) => ev.set({ ...e, questions });

  return (
    <section class="card stack eval-panel" aria-labelledby="eval-title">
      <div class="page-head">
        <h2 id="eval-title">{t('eval.title')}</h2>
        {e.canEdit && (
          <form onSubmit={run.handler(() => data(api.POST('/api/v1/plus/{plusId}/evaluation/run', path)).then((lastRun) => ev.set({ ...e, lastRun })))}>
            <button type="submit" class="primary" disabled={run.busy || e.questions.length === 0} aria-busy={run.busy}>
              {run.busy ? t('eval.running') : t('eval.run')}
            </button>
          </form>
        )}
      </div>
      <p class="muted small">{t('eval.intro')}</p>
      <ErrorNote error={run.error} />
      <ErrorNote error={error} />
      {e.lastRun ? <RunSummary run={e.lastRun} /> : e.questions.length > 0 && <p class="muted">{t('eval.notRunYetSentence')}</p>}

      {e.questions.length === 0 ? (
        <p class="muted">{t('eval.noQuestion')}</p>
      ) : (
        <ol class="eval-list" aria-label={t('eval.questions')}>
          {e.questions.map((q) => {
            const words = resultWords(results.get(q.id), q);
            return (
              <li key={q.id} class="eval-item">
                {editing === q.id ? (
                  <QuestionForm
                    initial={q}
                    submitLabel={t('common.save')}
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
                        <button type="button" class="small-button" aria-label={t('eval.editNamed', { question: q.question })} onClick={() => setEditing(q.id)}>
                          {t('common.edit')}
                        </button>
                        <ConfirmButton
                          label={t('common.delete')}
                          what={t('eval.questionWhat', { question: q.question })}
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
          <h3>{t('eval.addForm')}</h3>
          <QuestionForm
            submitLabel={t('eval.add')}
            onSubmit={(body) =>
              data(api.POST('/api/v1/plus/{plusId}/evaluation/questions', { ...path, body })).then((added) => withQuestions([...e.questions, added]))
            }
          />
        </div>
      )}
    </section>
  );
}
