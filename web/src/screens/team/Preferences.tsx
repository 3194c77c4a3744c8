/** My preferences (settings.ts): theme, Enter to send, the workspace the app opens in and the model a chat starts with. */
import { api, data } from '../../api/client';
import { ErrorNote } from '../../components/Problem';
import { useLoad } from '../../components/useLoad';
import { updateSettings, useSettings, type Theme } from '../../settings';

const THEMES: Array<[Theme, string]> = [
  ['system', 'Same as this device'],
  ['light', 'Light'],
  ['dark', 'Dark'],
];

export function Preferences() {
  const s = useSettings();
  const workspaces = useLoad(() => data(api.GET('/api/v1/workspaces')), []);
  const list = workspaces.value ?? [];
  // The models of the workspaces I see, each once, by name.
  const models = [...new Map(list.flatMap((w) => w.models.map((m) => [m.modelId, m.modelName] as const))).entries()].sort((a, b) => a[1].localeCompare(b[1]));
  const gone = (id: string | null, known: ReadonlyArray<readonly [string, string]> | null | undefined) =>
    id !== null && !!known && !known.some(([k]) => k === id);
  return (
    <section class="card stack" aria-labelledby="prefs-title">
      <h2 id="prefs-title">Preferences</h2>
      <p class="muted small">Kept in this browser.</p>
      <fieldset>
        <legend>Theme</legend>
        {THEMES.map(([value, label]) => (
          <label key={value} class="check">
            <input type="radio" name="theme" value={value} checked={s.theme === value} onChange={() => updateSettings({ theme: value })} />
            {label}
          </label>
        ))}
      </fieldset>
      <label class="check">
        <input type="checkbox" checked={s.sendOnEnter} onChange={(e) => updateSettings({ sendOnEnter: e.currentTarget.checked })} />
        Enter sends the message (otherwise Ctrl+Enter or ⌘+Enter sends, and Enter adds a line)
      </label>
      <label>
        Open Atrium in
        <select
          value={s.defaultWorkspaceId ?? ''}
          onChange={(e) => updateSettings({ defaultWorkspaceId: e.currentTarget.value || null })}
          disabled={!workspaces.value}
        >
          <option value="">The list of workspaces</option>
          {gone(s.defaultWorkspaceId, workspaces.value && list.map((w) => [w.id, w.name] as const)) && (
            <option value={s.defaultWorkspaceId!}>A workspace that is no longer available</option>
          )}
          {list.map((w) => (
            <option key={w.id} value={w.id}>
              {w.name}
            </option>
          ))}
        </select>
      </label>
      <label>
        Start chats with
        <select value={s.defaultModelId ?? ''} onChange={(e) => updateSettings({ defaultModelId: e.currentTarget.value || null })} disabled={!workspaces.value}>
          <option value="">The workspace's first model</option>
          {gone(s.defaultModelId, workspaces.value && models) && <option value={s.defaultModelId!}>A model that is no longer available</option>}
          {models.map(([id, name]) => (
            <option key={id} value={id}>
              {name}
            </option>
          ))}
        </select>
        <span class="muted small">Where a workspace does not offer it, a chat starts with the workspace's first model.</span>
      </label>
      <ErrorNote error={workspaces.error} />
    </section>
  );
}
