/**
 * Create or edit a workspace: name, models (the first is the default; only the team's active chat
 * models are offered), the document sets every chat in it draws on, sharing, history and context
 * scopes, greeting, sample prompts, and each model's settings with the API's ranges (docs/API.md;
 * the server checks them again). Editing is its creator's or a team owner's/admin's: anyone else
 * is told so instead of getting a form.
 */
import { useEffect, useState } from 'preact/hooks';
import { api, data, type Model, type PlusSummary, type Workspace, type WorkspaceModel } from '../../api/client';
import { isTeamAdmin } from '../../components/format';
import { Link } from '../../components/Link';
import { NotAllowed } from '../../components/NotAllowed';
import { ErrorNote } from '../../components/Problem';
import { useSubmit } from '../../components/useSubmit';
import { navigate } from '../../router';
import { useSession } from '../../session';
import { allowedToolsOf, ToolsFieldset } from './ToolsFieldset';
import { t } from '../../i18n';

type Settings = Pick<
  WorkspaceModel,
  'systemInstructions' | 'addedContext' | 'temperature' | 'maxTokens' | 'topP' | 'n' | 'frequencyPenalty' | 'presencePenalty' | 'logitBias'
>;
const EMPTY: Settings = {
  systemInstructions: null,
  addedContext: null,
  temperature: null,
  maxTokens: null,
  topP: null,
  n: null,
  frequencyPenalty: null,
  presencePenalty: null,
  logitBias: null,
};

interface NumberSpec {
  key: 'temperature' | 'maxTokens' | 'topP' | 'n' | 'frequencyPenalty' | 'presencePenalty';
  label: () => string;
  min: number;
  max?: number;
  step: number;
}
const NUMBERS: NumberSpec[] = [
  { key: 'temperature', label: () => t('ws.f.temperature'), min: 0, max: 2, step: 0.1 },
  { key: 'topP', label: () => t('ws.f.topP'), min: 0, max: 1, step: 0.05 },
  { key: 'maxTokens', label: () => t('ws.f.maxTokens'), min: 1, step: 1 },
  { key: 'n', label: () => t('ws.f.n'), min: 1, max: 8, step: 1 },
  { key: 'frequencyPenalty', label: () => t('ws.f.frequencyPenalty'), min: -2, max: 2, step: 0.1 },
  { key: 'presencePenalty', label: () => t('ws.f.presencePenalty'), min: -2, max: 2, step: 0.1 },
];

const settingsOf = (m: WorkspaceModel): Settings => ({
  systemInstructions: m.systemInstructions,
  addedContext: m.addedContext,
  temperature: m.temperature,
  maxTokens: m.maxTokens,
  topP: m.topP,
  n: m.n,
  frequencyPenalty: m.frequencyPenalty,
  presencePenalty: m.presencePenalty,
  logitBias: m.logitBias,
});
const same = (a: Settings, b: Settings) => JSON.stringify(a) === JSON.stringify(b);

/** A model a workspace can answer with: the team's, switched on, a chat model that answers in text. */
export const answersChats = (m: Model) => m.inTeam && m.active && m.kind === 'chat' && !m.imageGen;

/** The form's field names as its labels say them, for refusals (components/Problem.tsx). */
const LABELS = () => ({
  name: t('ws.f.name'),
  modelIds: t('problem.field.modelIds'),
  plusIds: t('problem.field.plusIds'),
  mcpServerIds: t('ws.f.tools'),
  allowedTools: t('ws.f.onlyTools'),
  greeting: t('ws.f.greeting'),
  samplePrompts: t('chat.samples'),
  topP: t('ws.f.topP'),
  maxTokens: t('ws.f.maxTokens'),
  n: t('ws.f.n'),
  logitBias: t('ws.f.logitBias'),
});

export function WorkspaceForm({ workspaceId }: { workspaceId?: string }) {
  const { me } = useSession();
  const [models, setModels] = useState<Model[] | null>(null);
  const [documents, setDocuments] = useState<PlusSummary[] | null>(null);
  const [plusIds, setPlusIds] = useState<string[]>([]);
  const [mcpServerIds, setMcpServerIds] = useState<string[]>([]);
  const [allowedText, setAllowedText] = useState('');
  const [existing, setExisting] = useState<Workspace | null>(null);
  const [name, setName] = useState('');
  const [modelIds, setModelIds] = useState<string[]>([]);
  const [sharingType, setSharing] = useState<Workspace['sharingType']>('TEAM');
  const [chatHistoryType, setHistory] = useState<Workspace['chatHistoryType']>('USER');
  const [contextType, setContext] = useState<Workspace['contextType']>('SHARED');
  const [followUpSearch, setFollowUp] = useState<Workspace['followUpSearch']>('carry');
  const [greeting, setGreeting] = useState('');
  const [samples, setSamples] = useState('');
  const [settings, setSettings] = useState<Record<string, Settings>>({});
  const [biasText, setBiasText] = useState<Record<string, string>>({});
  const submit = useSubmit();
  const { error, setError, busy } = submit;

  useEffect(() => {
    data(api.GET('/api/v1/models')).then((all) => setModels(all.filter(answersChats)), setError);
    data(api.GET('/api/v1/plus', { params: { query: { showPublic: true } } })).then(setDocuments, setError);
    if (!workspaceId) return;
    data(api.GET('/api/v1/workspaces/{workspaceId}', { params: { path: { workspaceId } } })).then((w) => {
      setExisting(w);
      setName(w.name);
      setModelIds(w.models.map((m) => m.modelId));
      setPlusIds(w.plusIds);
      setMcpServerIds(w.mcpServerIds);
      setAllowedText((w.allowedTools ?? []).join('\n'));
      setSharing(w.sharingType);
      setHistory(w.chatHistoryType);
      setContext(w.contextType);
      setFollowUp(w.followUpSearch);
      setGreeting(w.greeting ?? '');
      setSamples(w.samplePrompts.join('\n'));
      setSettings(Object.fromEntries(w.models.map((m) => [m.modelId, settingsOf(m)])));
      setBiasText(Object.fromEntries(w.models.map((m) => [m.modelId, m.logitBias ? JSON.stringify(m.logitBias) : ''])));
    }, setError);
  }, [workspaceId]);

  const modelById = new Map((models ?? []).map((m) => [m.id, m]));
  const nameOf = (id: string) => modelById.get(id)?.name ?? existing?.models.find((m) => m.modelId === id)?.modelName ?? t('ws.modelGone');
  // A model already in the workspace stays listed (so it can be taken out) even when it no longer answers chats.
  const offered = [...(models ?? []), ...modelIds.filter((id) => !modelById.has(id)).map((id) => ({ id, name: t('ws.notAvailable', { name: nameOf(id) }) }))];
  const setSetting = (modelId: string, patch: Partial<Settings>) => setSettings((s) => ({ ...s, [modelId]: { ...(s[modelId] ?? EMPTY), ...patch } }));

  async function save() {
    const body = {
      name: name.trim(),
      modelIds,
      sharingType,
      chatHistoryType,
      contextType,
      followUpSearch,
      plusIds,
      mcpServerIds,
      allowedTools: mcpServerIds.length > 0 ? allowedToolsOf(allowedText) : null,
      greeting: greeting.trim() || null,
      samplePrompts: samples
        .split('\n')
        .map((s) => s.trim())
        .filter(Boolean),
    };
    // Logit bias is typed as JSON; a bad one is caught here rather than sent.
    const parsedBias: Record<string, Settings['logitBias']> = {};
    for (const id of modelIds) {
      const text = (biasText[id] ?? '').trim();
      if (!text) parsedBias[id] = null;
      else {
        try {
          parsedBias[id] = JSON.parse(text) as Record<string, number>;
        } catch {
          throw new Error(t('ws.biasInvalid', { name: nameOf(id) }));
        }
      }
    }
    const ws = workspaceId
      ? await data(api.PATCH('/api/v1/workspaces/{workspaceId}', { params: { path: { workspaceId } }, body }))
      : await data(api.POST('/api/v1/workspaces', { body }));
    for (const m of ws.models) {
      const wanted = { ...(settings[m.modelId] ?? EMPTY), logitBias: parsedBias[m.modelId] ?? null };
      if (same(wanted, settingsOf(m))) continue;
      await data(api.POST('/api/v1/workspaces/{workspaceId}/{modelId}', { params: { path: { workspaceId: ws.id, modelId: m.modelId } }, body: wanted }));
    }
    navigate(`/w/${ws.id}`);
  }

  const title = workspaceId ? t('common.editWhat', { name: existing?.name ?? t('ws.aWorkspace') }) : t('ws.new');
  if (workspaceId && !existing)
    return <section class="page narrow">{error ? <ErrorNote error={error} /> : <p aria-busy="true">{t('common.loading')}</p>}</section>;
  if (existing && existing.userId !== me.user.id && !isTeamAdmin(me.user.role)) {
    return (
      <NotAllowed title={title} back={{ href: `/w/${existing.id}`, label: t('common.backTo', { name: existing.name }) }}>
        {t('ws.notAllowed')}
      </NotAllowed>
    );
  }
  return (
    <section class="page narrow">
      <h1>{title}</h1>
      <form class="stack" aria-label={title} onSubmit={submit.handler(save)}>
        <label>
          {t('ws.f.name')}
          <input required maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </label>

        <fieldset>
          <legend>{t('problem.field.modelIds')}</legend>
          {models === null && <p aria-busy="true">{t('ws.loadingModels')}</p>}
          {models?.length === 0 && <p class="muted">{t('ws.noModels')}</p>}
          {models !== null &&
            offered.map((m) => (
              <label key={m.id} class="check">
                <input
                  type="checkbox"
                  checked={modelIds.includes(m.id)}
                  onChange={(e) => setModelIds((ids) => (e.currentTarget.checked ? [...ids, m.id] : ids.filter((x) => x !== m.id)))}
                />
                {m.name}
                {modelIds[0] === m.id && <span class="badge">{t('ws.default')}</span>}
              </label>
            ))}
          <p class="hint">{t('ws.modelsHint')}</p>
        </fieldset>

        <fieldset>
          <legend>{t('problem.field.plusIds')}</legend>
          {documents === null && <p aria-busy="true">{t('ws.loadingDocs')}</p>}
          {documents?.length === 0 && <p class="muted">{t('ws.noDocs')}</p>}
          {documents?.map((d) => (
            <label key={d.id} class="check">
              <input
                type="checkbox"
                checked={plusIds.includes(d.id)}
                onChange={(e) => setPlusIds((ids) => (e.currentTarget.checked ? [...ids, d.id] : ids.filter((x) => x !== d.id)))}
              />
              {d.title || t('common.untitled')}
              {!d.isPublic && <span class="badge">{t('ws.private')}</span>}
            </label>
          ))}
          <p class="hint">{t('ws.docsHint')}</p>
        </fieldset>

        <ToolsFieldset serverIds={mcpServerIds} onServerIds={setMcpServerIds} allowedText={allowedText} onAllowedText={setAllowedText} onError={setError} />

        <div class="row">
          <label>
            {t('ws.sharing')}
            <select value={sharingType} onChange={(e) => setSharing(e.currentTarget.value as Workspace['sharingType'])}>
              <option value="TEAM">{t('ws.sharing.team')}</option>
              <option value="PRIVATE">{t('ws.sharing.private')}</option>
            </select>
          </label>
          <label>
            {t('ws.history')}
            <select value={chatHistoryType} onChange={(e) => setHistory(e.currentTarget.value as Workspace['chatHistoryType'])}>
              <option value="USER">{t('ws.history.user')}</option>
              <option value="TEAM">{t('ws.history.team')}</option>
            </select>
          </label>
          <label>
            {t('ws.context')}
            <select value={contextType} onChange={(e) => setContext(e.currentTarget.value as Workspace['contextType'])}>
              <option value="SHARED">{t('ws.context.shared')}</option>
              <option value="PRIVATE">{t('ws.context.private')}</option>
            </select>
          </label>
        </div>
        <p class="hint">{t('ws.choicesHint')}</p>

        <label>
          {t('ws.followUp')}
          <select value={followUpSearch} onChange={(e) => setFollowUp(e.currentTarget.value as Workspace['followUpSearch'])}>
            <option value="carry">{t('ws.followUp.carry')}</option>
            <option value="rewrite">{t('ws.followUp.rewrite')}</option>
          </select>
        </label>
        <p class="hint">{t('ws.followUpHint')}</p>

        <label>
          {t('ws.f.greeting')}
          <textarea rows={2} value={greeting} onInput={(e) => setGreeting(e.currentTarget.value)} />
        </label>
        <label>
          {t('ws.samplesField')}
          <textarea rows={3} value={samples} onInput={(e) => setSamples(e.currentTarget.value)} />
        </label>

        {modelIds.map((id) => {
          const s = settings[id] ?? EMPTY;
          const window = modelById.get(id)?.contextWindow ?? undefined;
          return (
            <fieldset key={id} class="model-settings">
              <legend>{t('ws.settingsOf', { name: nameOf(id) })}</legend>
              <label>
                {t('ws.system')}
                <textarea rows={2} value={s.systemInstructions ?? ''} onInput={(e) => setSetting(id, { systemInstructions: e.currentTarget.value || null })} />
              </label>
              <label>
                {t('ws.addedContext')}
                <textarea rows={2} value={s.addedContext ?? ''} onInput={(e) => setSetting(id, { addedContext: e.currentTarget.value || null })} />
              </label>
              <div class="row numbers">
                {NUMBERS.map((n) => (
                  <label key={n.key}>
                    {n.label()}
                    <input
                      type="number"
                      min={n.min}
                      max={n.key === 'maxTokens' ? window : n.max}
                      step={n.step}
                      placeholder={t('ws.default')}
                      value={s[n.key] ?? ''}
                      onInput={(e) => {
                        const v = e.currentTarget.value;
                        setSetting(id, { [n.key]: v === '' ? null : Number(v) });
                      }}
                    />
                  </label>
                ))}
              </div>
              <label>
                {t('ws.biasField')}
                <input value={biasText[id] ?? ''} placeholder='{"50256": -100}' onInput={(e) => setBiasText((b) => ({ ...b, [id]: e.currentTarget.value }))} />
              </label>
            </fieldset>
          );
        })}

        <ErrorNote error={error} labels={LABELS()} />
        <div class="actions">
          <button type="submit" class="primary" disabled={busy}>
            {workspaceId ? t('ws.save') : t('ws.create')}
          </button>
          <Link href={workspaceId ? `/w/${workspaceId}` : '/'} class="button ghost">
            {t('common.cancel')}
          </Link>
        </div>
      </form>
    </section>
  );
}
