/**
 * Create or edit a model: provider fields, window, credits, prompt wrapper and flags. The API key
 * is write-only: the form shows the stored mask, sends a key only when one is typed (or null when
 * "Remove the stored key" is ticked) and never receives the key itself.
 */
import '../../components/admin.css';
import { useEffect, useState } from 'preact/hooks';
import { api, data, type Model } from '../../api/client';
import type { paths } from '../../api/openapi';
import { formatNumber, isTeamAdmin } from '../../components/format';
import { NotAllowed } from '../../components/NotAllowed';
import { ErrorNote } from '../../components/Problem';
import { useSubmit } from '../../components/useSubmit';
import { navigate } from '../../router';
import { useSession } from '../../session';
import { ConnectionTest } from './ConnectionTest';
import { t } from '../../i18n';

type ModelRequest = NonNullable<paths['/api/v1/models/{modelId}']['patch']['requestBody']>['content']['application/json'];

const FLAGS = [
  ['active', () => t('model.flag.active')],
  ['usesSystemPrompts', () => t('model.flag.system')],
  ['instructionFollowing', () => t('model.flag.instructions')],
  ['hasVision', () => t('model.flag.vision')],
  ['imageGen', () => t('model.flag.imageGen')],
  ['specialized', () => t('model.flag.specialised')],
  ['internalUseOnly', () => t('model.flag.internal')],
] as const;
type Flag = (typeof FLAGS)[number][0];

interface FormState {
  name: string;
  kind: 'chat' | 'embedding' | 'rerank';
  embeddingDimensions: string;
  apiBase: 'OPENAI' | 'ANTHROPIC' | 'GOOGLE';
  connectionType: 'URL' | 'AZURE';
  url: string;
  baseModel: string;
  contextWindow: string;
  chatCredits: string;
  modelRating: string;
  wrapperName: string;
  wrapperValue: string;
  flags: Record<Flag, boolean>;
  newKey: string;
  removeKey: boolean;
}

function fromModel(m: Model | null): FormState {
  return {
    name: m?.name ?? '',
    kind: m?.kind ?? 'chat',
    embeddingDimensions: m?.embeddingDimensions != null ? String(m.embeddingDimensions) : '',
    apiBase: m?.apiBase ?? 'OPENAI',
    connectionType: m?.connectionType ?? 'URL',
    url: m?.url ?? '',
    baseModel: m?.baseModel ?? '',
    contextWindow: m?.contextWindow != null ? String(m.contextWindow) : '',
    chatCredits: String(m?.chatCredits ?? 0),
    modelRating: m?.modelRating != null ? String(m.modelRating) : '',
    wrapperName: m?.promptWrapper?.wrapperName ?? '',
    wrapperValue: m?.promptWrapper?.value ?? '',
    flags: Object.fromEntries(
      FLAGS.map(([k]) => [k, m ? Boolean(m[k]) : k === 'active' || k === 'usesSystemPrompts' || k === 'instructionFollowing']),
    ) as Record<Flag, boolean>,
    newKey: '',
    removeKey: false,
  };
}

const intOrNull = (s: string): number | null => (s.trim() === '' ? null : Number(s));

function toRequest(f: FormState): ModelRequest {
  const body: ModelRequest = {
    name: f.name.trim(),
    kind: f.kind,
    embeddingDimensions: f.kind === 'embedding' ? intOrNull(f.embeddingDimensions) : null,
    apiBase: f.apiBase,
    connectionType: f.connectionType,
    url: f.url.trim() || null,
    baseModel: f.baseModel.trim() || null,
    contextWindow: intOrNull(f.contextWindow),
    chatCredits: Number(f.chatCredits || 0),
    modelRating: intOrNull(f.modelRating),
    promptWrapper: f.wrapperName.trim() || f.wrapperValue.trim() ? { wrapperName: f.wrapperName.trim(), value: f.wrapperValue } : null,
    ...f.flags,
  };
  if (f.removeKey) body.apiKey = null;
  else if (f.newKey) body.apiKey = f.newKey;
  return body;
}

/** Who may use this form: team models are an owner's or admin's; system models the instance admin's. */
export function ModelForm(props: { modelId?: string; system?: boolean }) {
  const { me } = useSession();
  const back = { href: '/models', label: t('model.back') };
  if (!isTeamAdmin(me.user.role)) {
    return (
      <NotAllowed title={props.modelId ? t('model.editA') : t('model.new')} back={back}>
        {t('model.notAllowed')}
      </NotAllowed>
    );
  }
  if (props.system && !props.modelId && !me.user.instanceAdmin) {
    return (
      <NotAllowed title={t('model.newSystem')} back={back}>
        {t('model.notAllowedSystem')}
      </NotAllowed>
    );
  }
  return <ModelEditor {...props} instanceAdmin={me.user.instanceAdmin} />;
}

function ModelEditor({ modelId, system = false, instanceAdmin }: { modelId?: string; system?: boolean; instanceAdmin: boolean }) {
  const [model, setModel] = useState<Model | null>(null);
  const [f, setF] = useState<FormState>(fromModel(null));
  const submit = useSubmit();
  const { error, setError, busy } = submit;
  const [warnings, setWarnings] = useState<string[]>([]);
  useEffect(() => {
    if (!modelId) return;
    data(api.GET('/api/v1/models/{modelId}', { params: { path: { modelId } } })).then((m) => {
      setModel(m);
      setF(fromModel(m));
    }, setError);
  }, [modelId]);
  if (modelId && !model) return <section class="page narrow">{error ? <ErrorNote error={error} /> : <p aria-busy="true">{t('common.loading')}</p>}</section>;
  const isSystem = model ? model.system : system;
  if (model?.system && !instanceAdmin) {
    return (
      <NotAllowed title={t('common.editWhat', { name: model.name })} back={{ href: '/models', label: t('model.back') }}>
        {t('model.notAllowedChangeSystem')}
      </NotAllowed>
    );
  }
  const set = (patch: Partial<FormState>) => setF({ ...f, ...patch });

  return (
    <section class="page narrow stack">
      <h1>{model ? t('common.editWhat', { name: model.name }) : isSystem ? t('model.newSystem') : t('model.new')}</h1>
      <form
        class="stack"
        onSubmit={submit.handler(() => {
          const body = toRequest(f);
          const call = model
            ? data(api.PATCH('/api/v1/models/{modelId}', { params: { path: { modelId: model.id } }, body }))
            : data(api.POST('/api/v1/models', { params: { query: { system: isSystem } }, body: { ...body, name: body.name ?? '' } }));
          return call.then((saved) => {
            setModel(saved);
            setF(fromModel(saved));
            setWarnings(saved.warnings ?? []);
            if (!model) navigate(`/models/${saved.id}/edit`, { replace: true });
          });
        })}
      >
        <label>
          {t('ws.f.name')}
          <input value={f.name} required maxLength={200} onInput={(e) => set({ name: e.currentTarget.value })} />
        </label>
        <div class="row">
          <label>
            {t('model.kind')}
            <select
              aria-label={t('model.kind')}
              value={f.kind}
              onChange={(e) =>
                set({
                  kind: e.currentTarget.value as FormState['kind'],
                  ...(e.currentTarget.value === 'embedding' && f.apiBase === 'ANTHROPIC' ? { apiBase: 'OPENAI' } : {}),
                  ...(e.currentTarget.value === 'rerank' ? { apiBase: 'OPENAI', connectionType: 'URL' } : {}),
                })
              }
            >
              <option value="chat">{t('model.kind.chat')}</option>
              <option value="embedding">{t('model.kind.embedding')}</option>
              <option value="rerank">Rerank: orders the passages found for a question (POST {'{url}'}/rerank)</option>
            </select>
          </label>
          {f.kind === 'embedding' && (
            <label>
              {t('model.vectorSize')}
              <input
                type="number"
                min={1}
                max={16000}
                step={1}
                value={f.embeddingDimensions}
                placeholder={t('model.own')}
                aria-describedby="dims-hint"
                onInput={(e) => set({ embeddingDimensions: e.currentTarget.value })}
              />
              <span class="hint" id="dims-hint">
                {t('model.vectorHint')}
              </span>
            </label>
          )}
        </div>
        <fieldset>
          <legend>{t('model.provider')}</legend>
          <div class="row">
            <label>
              {t('model.protocol')}
              <select
                aria-label={t('model.protocol')}
                value={f.apiBase}
                onChange={(e) =>
                  set({ apiBase: e.currentTarget.value as FormState['apiBase'], ...(e.currentTarget.value !== 'OPENAI' ? { connectionType: 'URL' } : {}) })
                }
              >
                <option value="OPENAI">{t('model.openaiCompatible')}</option>
                <option value="ANTHROPIC" disabled={f.kind !== 'chat'}>
                  Anthropic{f.kind === 'embedding' ? ' (no embeddings API)' : f.kind === 'rerank' ? ' (no rerank API)' : ''}
                </option>
                <option value="GOOGLE" disabled={f.kind === 'rerank'}>
                  Google Gemini{f.kind === 'rerank' ? ' (no rerank API)' : ''}
                </option>
              </select>
            </label>
            <label>
              {t('model.connectionType')}
              <select
                aria-label={t('model.connectionType')}
                value={f.connectionType}
                onChange={(e) => set({ connectionType: e.currentTarget.value as FormState['connectionType'] })}
              >
                <option value="URL">URL</option>
                <option value="AZURE" disabled={f.apiBase !== 'OPENAI'}>
                  Azure OpenAI
                </option>
              </select>
            </label>
          </div>
          <label>
            URL
            <input value={f.url} maxLength={2048} placeholder={t('model.urlPlaceholder')} onInput={(e) => set({ url: e.currentTarget.value })} />
          </label>
          <label>
            {t('model.baseModel')}
            <input
              value={f.baseModel}
              maxLength={200}
              placeholder={f.connectionType === 'AZURE' ? t('model.deployment') : t('model.baseExample')}
              onInput={(e) => set({ baseModel: e.currentTarget.value })}
            />
          </label>
          <label>
            {t('model.apiKey')}
            <input
              type="password"
              autoComplete="new-password"
              value={f.newKey}
              disabled={f.removeKey}
              maxLength={4096}
              placeholder={model?.apiKey ? t('model.keyStoredPlaceholder', { key: model.apiKey }) : t('model.noKey')}
              aria-describedby="key-hint"
              onInput={(e) => set({ newKey: e.currentTarget.value })}
            />
            <span class="hint" id="key-hint">
              {model?.apiKey ? t('model.keyStored', { key: model.apiKey }) : t('model.keyNew')}
            </span>
          </label>
          {model?.apiKey && (
            <label class="check">
              <input type="checkbox" checked={f.removeKey} onChange={(e) => set({ removeKey: e.currentTarget.checked, newKey: '' })} />
              {t('model.removeKey')}
            </label>
          )}
        </fieldset>
        <fieldset>
          <legend>{t('model.limits')}</legend>
          <div class="row numbers">
            <label>
              {t('model.window')}
              <input
                type="number"
                min={1}
                max={100000000}
                value={f.contextWindow}
                aria-describedby="window-hint"
                onInput={(e) => set({ contextWindow: e.currentTarget.value })}
              />
              <span class="hint" id="window-hint">
                {model?.contextWindowSource === 'probed' ? t('model.windowProbed', { tokens: formatNumber(model.contextWindowUsed) }) : t('model.windowHint')}
              </span>
            </label>
            <label>
              {t('model.credits')}
              <input type="number" min={0} max={1000000} step={1} value={f.chatCredits} onInput={(e) => set({ chatCredits: e.currentTarget.value })} />
            </label>
            <label>
              {t('model.rating')}
              <input type="number" min={0} max={100} value={f.modelRating} onInput={(e) => set({ modelRating: e.currentTarget.value })} />
            </label>
          </div>
        </fieldset>
        <fieldset>
          <legend>{t('model.wrapper')}</legend>
          <label>
            {t('model.wrapperName')}
            <input value={f.wrapperName} maxLength={200} onInput={(e) => set({ wrapperName: e.currentTarget.value })} />
          </label>
          <label>
            {t('model.wrapperTemplate')}
            <textarea rows={3} value={f.wrapperValue} maxLength={20000} onInput={(e) => set({ wrapperValue: e.currentTarget.value })} />
          </label>
        </fieldset>
        <fieldset>
          <legend>{t('model.flags')}</legend>
          <div class="flags">
            {FLAGS.map(([k, label]) => (
              <label class="check" key={k}>
                <input type="checkbox" checked={f.flags[k]} onChange={(e) => set({ flags: { ...f.flags, [k]: e.currentTarget.checked } })} />
                {label()}
              </label>
            ))}
          </div>
        </fieldset>
        <ErrorNote error={error} />
        {warnings.length > 0 && (
          <div class="warn-note" role="status">
            {warnings.map((w) => (
              <p key={w}>{w}</p>
            ))}
          </div>
        )}
        <div class="actions">
          <button type="submit" class="primary" disabled={busy}>
            {model ? t('common.save') : t('docs.create')}
          </button>
          <button type="button" onClick={() => navigate('/models')}>
            {t('model.back')}
          </button>
        </div>
      </form>
      {model && (
        <section class="card stack" aria-labelledby="test-title">
          <h2 id="test-title">{t('model.testTitle')}</h2>
          <p class="hint">{t('model.testHint')}</p>
          <ConnectionTest model={model} />
        </section>
      )}
    </section>
  );
}
