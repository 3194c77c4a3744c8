/**
 * The team's embedding model: what turns its documents into vectors so that chats find passages by
 * meaning as well as by their words. Owners/admins choose it (every file is embedded again in the
 * background, with progress shown); members read which one is in use.
 */
import { useEffect, useState } from 'preact/hooks';
import { api, data, type Model } from '../../api/client';
import { formatNumber } from '../../components/format';
import { ErrorNote } from '../../components/Problem';
import { useLoad } from '../../components/useLoad';
import { useSubmit } from '../../components/useSubmit';
import { t } from '../../i18n';

const NONE = '';

export function EmbeddingSetting({ models, canChoose }: { models: Model[]; canChoose: boolean }) {
  const settings = useLoad(() => data(api.GET('/api/v1/embeddings/settings')), []);
  const [choice, setChoice] = useState(NONE);
  const [saved, setSaved] = useState(false);
  const submit = useSubmit();
  const current = settings.value?.embeddingModelId ?? NONE;
  useEffect(() => setChoice(current), [current]);
  const usable = models.filter((m) => m.kind === 'embedding' && m.inTeam && m.active);
  const files = settings.value?.files;
  const busyFiles = files ? files.pending + files.embedding : 0;

  return (
    <section class="card stack" aria-labelledby="embedding-title">
      <h2 id="embedding-title">{t('embed.title')}</h2>
      <ErrorNote error={settings.error} />
      {settings.value && (
        <p class="muted">
          {settings.value.embeddingModelId ? t('embed.on', { name: settings.value.modelName ?? t('embed.gone') }) : t('embed.off')}
          {files && settings.value.embeddingModelId && (
            <>
              {' '}
              {formatNumber(files.ready)} files ready{busyFiles > 0 ? `, ${formatNumber(busyFiles)} still being embedded` : ''}
              {files.failed > 0 ? `, ${formatNumber(files.failed)} failed (tried again later)` : ''}.
            </>
          )}
        </p>
      )}
      {canChoose && settings.value && (
        <form
          class="stack"
          aria-label={t('problem.field.embeddingModelId')}
          onSubmit={submit.handler(async () => {
            setSaved(false);
            const next = await data(api.PUT('/api/v1/embeddings/settings', { body: { embeddingModelId: choice || null } }));
            settings.set(next);
            setSaved(true);
          })}
        >
          <div class="row">
            <label>
              {t('problem.field.embeddingModelId')}
              <select
                value={choice}
                onChange={(e) => {
                  setChoice(e.currentTarget.value);
                  setSaved(false);
                }}
              >
                <option value={NONE}>{t('embed.none')}</option>
                {usable.map((m) => (
                  <option key={m.id} value={m.id}>
                    {m.name}
                  </option>
                ))}
              </select>
            </label>
          </div>
          <p class="hint">{usable.length === 0 ? t('embed.noModel') : t('embed.saveHint')}</p>
          <ErrorNote error={submit.error} labels={{ embeddingModelId: t('problem.field.embeddingModelId') }} />
          <div class="actions">
            <button type="submit" class="primary" disabled={submit.busy || (choice === current && choice === NONE)}>
              {submit.busy ? t('common.saving') : t('embed.save')}
            </button>
            {saved && (
              <span role="status" class="muted">
                {t('common.saved')}
              </span>
            )}
          </div>
        </form>
      )}
    </section>
  );
}
