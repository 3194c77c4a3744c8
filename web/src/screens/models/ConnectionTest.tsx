/**
 * "Test connection": a one-line prompt sent through the model; shows the answer or the provider's
 * error. An embedding model is tested on its embeddings endpoint: the text is embedded and the
 * answer is the vector's size.
 */
import { useState } from 'preact/hooks';
import { api, data, type Schemas } from '../../api/client';
import { ErrorNote } from '../../components/Problem';
import { problemWords } from '../../lib/problem-words';
import { t } from '../../i18n';

type Result = NonNullable<Awaited<ReturnType<typeof runTest>>>;

function runTest(modelId: string, prompt: string) {
  return data(api.POST('/api/v1/models/{modelId}/test', { params: { path: { modelId } }, body: { prompt } }));
}

export function ConnectionTest({ model }: { model: Pick<Schemas['Model'], 'id' | 'name' | 'kind'> }) {
  const embedding = model.kind === 'embedding';
  const [prompt, setPrompt] = useState(() => (embedding ? t('test.embedSample') : t('test.chatSample')));
  const [result, setResult] = useState<Result | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  return (
    <form
      class="stack connection-test"
      aria-label={t('test.of', { name: model.name })}
      onSubmit={(e) => {
        e.preventDefault();
        setBusy(true);
        setError(null);
        setResult(null);
        runTest(model.id, prompt)
          .then(setResult, setError)
          .finally(() => setBusy(false));
      }}
    >
      <div class="ask-form">
        <label class="grow">
          {embedding ? t('test.textToEmbed') : t('test.prompt')}
          <input value={prompt} maxLength={2000} required onInput={(e) => setPrompt(e.currentTarget.value)} />
        </label>
        <button type="submit" disabled={busy || !prompt.trim()}>
          {busy ? t('test.busy') : t('test.button')}
        </button>
      </div>
      <ErrorNote error={error} />
      {result?.ok && (
        <div class="ok-note" role="status">
          <strong>{t('test.connected')}</strong> ({result.latencyMs} ms): {result.content}
        </div>
      )}
      {result && !result.ok && result.error && (
        <div class="error-note" role="alert">
          <p>
            <strong>{t('test.failed')}</strong> {problemWords(result.error).text}
          </p>
        </div>
      )}
    </form>
  );
}
