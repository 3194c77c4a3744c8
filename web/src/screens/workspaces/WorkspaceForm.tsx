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
  label: string;
  min: number;
  max?: number;
  step: number;
}
const NUMBERS: NumberSpec[] = [
  { key: 'temperature', label: 'Temperature', min: 0, max: 2, step: 0.1 },
  { key: 'topP', label: 'Top P', min: 0, max: 1, step: 0.05 },
  { key: 'maxTokens', label: 'Max tokens', min: 1, step: 1 },
  { key: 'n', label: 'Answers (n)', min: 1, max: 8, step: 1 },
  { key: 'frequencyPenalty', label: 'Frequency penalty', min: -2, max: 2, step: 0.1 },
  { key: 'presencePenalty', label: 'Presence penalty', min: -2, max: 2, step: 0.1 },
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
const LABELS = {
  name: 'Name',
  modelIds: 'Models',
  plusIds: 'Document sets',
  mcpServerIds: 'Tools',
  allowedTools: 'Only these tools',
  greeting: 'Greeting',
  samplePrompts: 'Sample prompts',
  topP: 'Top P',
  maxTokens: 'Max tokens',
  n: 'Answers (n)',
  logitBias: 'Logit bias',
};

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
  const nameOf = (id: string) => modelById.get(id)?.name ?? existing?.models.find((m) => m.modelId === id)?.modelName ?? 'a model no longer available';
  // A model already in the workspace stays listed (so it can be taken out) even when it no longer answers chats.
  const offered = [...(models ?? []), ...modelIds.filter((id) => !modelById.has(id)).map((id) => ({ id, name: `${nameOf(id)} (not available)` }))];
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
          throw new Error(`Logit bias of ${nameOf(id)} is not valid JSON (e.g. {"50256": -100}).`);
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

  const title = workspaceId ? `Edit ${existing?.name ?? 'workspace'}` : 'New workspace';
  if (workspaceId && !existing) return <section class="page narrow">{error ? <ErrorNote error={error} /> : <p aria-busy="true">Loading…</p>}</section>;
  if (existing && existing.userId !== me.user.id && !isTeamAdmin(me.user.role)) {
    return (
      <NotAllowed title={title} back={{ href: `/w/${existing.id}`, label: `Back to ${existing.name}` }}>
        Only the person who made this workspace and the team's owners and admins change it. You can chat in it as it is.
      </NotAllowed>
    );
  }
  return (
    <section class="page narrow">
      <h1>{title}</h1>
      <form class="stack" aria-label={title} onSubmit={submit.handler(save)}>
        <label>
          Name
          <input required maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </label>

        <fieldset>
          <legend>Models</legend>
          {models === null && <p aria-busy="true">Loading models…</p>}
          {models?.length === 0 && <p class="muted">The team has no model yet: an owner or admin adds one under Models.</p>}
          {models !== null &&
            offered.map((m) => (
              <label key={m.id} class="check">
                <input
                  type="checkbox"
                  checked={modelIds.includes(m.id)}
                  onChange={(e) => setModelIds((ids) => (e.currentTarget.checked ? [...ids, m.id] : ids.filter((x) => x !== m.id)))}
                />
                {m.name}
                {modelIds[0] === m.id && <span class="badge">default</span>}
              </label>
            ))}
          <p class="hint">The first model chosen answers unless the chat picks another. Only chat models the team uses are listed.</p>
        </fieldset>

        <fieldset>
          <legend>Document sets</legend>
          {documents === null && <p aria-busy="true">Loading document sets…</p>}
          {documents?.length === 0 && <p class="muted">No document set yet: make one under Documents, then add it here.</p>}
          {documents?.map((d) => (
            <label key={d.id} class="check">
              <input
                type="checkbox"
                checked={plusIds.includes(d.id)}
                onChange={(e) => setPlusIds((ids) => (e.currentTarget.checked ? [...ids, d.id] : ids.filter((x) => x !== d.id)))}
              />
              {d.title || 'Untitled'}
              {!d.isPublic && <span class="badge">private</span>}
            </label>
          ))}
          <p class="hint">Every chat in this workspace draws on the document sets chosen here, besides those picked in the chat itself.</p>
        </fieldset>

        <ToolsFieldset serverIds={mcpServerIds} onServerIds={setMcpServerIds} allowedText={allowedText} onAllowedText={setAllowedText} onError={setError} />

        <div class="row">
          <label>
            Sharing
            <select value={sharingType} onChange={(e) => setSharing(e.currentTarget.value as Workspace['sharingType'])}>
              <option value="TEAM">Team (every member)</option>
              <option value="PRIVATE">Private (only me)</option>
            </select>
          </label>
          <label>
            Chat history
            <select value={chatHistoryType} onChange={(e) => setHistory(e.currentTarget.value as Workspace['chatHistoryType'])}>
              <option value="USER">Each user their own</option>
              <option value="TEAM">Everyone sees all</option>
            </select>
          </label>
          <label>
            Context
            <select value={contextType} onChange={(e) => setContext(e.currentTarget.value as Workspace['contextType'])}>
              <option value="SHARED">Shared with all</option>
              <option value="PRIVATE">Private to who added</option>
            </select>
          </label>
        </div>
        <p class="hint">
          Sharing: who sees the workspace. Chat history: who sees whose chats. Context: whether files added in a chat help everyone in the workspace or only the
          person who added them.
        </p>

        <label>
          Follow-up questions
          <select value={followUpSearch} onChange={(e) => setFollowUp(e.currentTarget.value as Workspace['followUpSearch'])}>
            <option value="carry">Carry the last question's words</option>
            <option value="rewrite">Rewrite with the model first</option>
          </select>
        </label>
        <p class="hint">
          How a follow-up such as "and what about the second one?" searches the documents: with the previous question's key words added, or as the chat's model
          rewrites it into a standalone question (one short extra call, counted in its usage).
        </p>

        <label>
          Greeting
          <textarea rows={2} value={greeting} onInput={(e) => setGreeting(e.currentTarget.value)} />
        </label>
        <label>
          Sample prompts (one per line)
          <textarea rows={3} value={samples} onInput={(e) => setSamples(e.currentTarget.value)} />
        </label>

        {modelIds.map((id) => {
          const s = settings[id] ?? EMPTY;
          const window = modelById.get(id)?.contextWindow ?? undefined;
          return (
            <fieldset key={id} class="model-settings">
              <legend>Settings of {nameOf(id)}</legend>
              <label>
                System instructions
                <textarea rows={2} value={s.systemInstructions ?? ''} onInput={(e) => setSetting(id, { systemInstructions: e.currentTarget.value || null })} />
              </label>
              <label>
                Added context
                <textarea rows={2} value={s.addedContext ?? ''} onInput={(e) => setSetting(id, { addedContext: e.currentTarget.value || null })} />
              </label>
              <div class="row numbers">
                {NUMBERS.map((n) => (
                  <label key={n.key}>
                    {n.label}
                    <input
                      type="number"
                      min={n.min}
                      max={n.key === 'maxTokens' ? window : n.max}
                      step={n.step}
                      placeholder="default"
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
                Logit bias (JSON, values −100 to 100)
                <input value={biasText[id] ?? ''} placeholder='{"50256": -100}' onInput={(e) => setBiasText((b) => ({ ...b, [id]: e.currentTarget.value }))} />
              </label>
            </fieldset>
          );
        })}

        <ErrorNote error={error} labels={LABELS} />
        <div class="actions">
          <button type="submit" class="primary" disabled={busy}>
            {workspaceId ? 'Save workspace' : 'Create workspace'}
          </button>
          <Link href={workspaceId ? `/w/${workspaceId}` : '/'} class="button ghost">
            Cancel
          </Link>
        </div>
      </form>
    </section>
  );
}
