/** My preferences (settings.ts): theme, language, Enter to send, the workspace the app opens in and the model a chat starts with. */
import { api, data } from '../../api/client';
import { ErrorNote } from '../../components/Problem';
import { useLoad } from '../../components/useLoad';
import { browserLanguage } from '../../i18n';
import { updateSettings, useSettings, type Settings, type Theme } from '../../settings';
import { t } from '../../i18n';

const THEMES: Array<[Theme, () => string]> = [
  ['system', () => t('prefs.theme.system')],
  ['light', () => t('prefs.theme.light')],
  ['dark', () => t('prefs.theme.dark')],
];
/** Each language in its own words, so that it is found whatever the app speaks now. */
const LANGUAGE_NAMES: Array<[Settings['language'], () => string]> = [
  ['system', () => t('prefs.language.system', { name: LANGUAGE_OWN_NAMES[browserLanguage()] })],
  ['en', () => LANGUAGE_OWN_NAMES.en],
  ['de', () => LANGUAGE_OWN_NAMES.de],
];
const LANGUAGE_OWN_NAMES = { en: 'English', de: 'Deutsch' } as const;

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
      <h2 id="prefs-title">{t('prefs.title')}</h2>
      <p class="muted small">{t('prefs.kept')}</p>
      <label>
        {t('prefs.language')}
        <select value={s.language} onChange={(e) => updateSettings({ language: e.currentTarget.value as Settings['language'] })}>
          {LANGUAGE_NAMES.map(([value, label]) => (
            <option key={value} value={value} lang={value === 'system' ? undefined : value}>
              {label()}
            </option>
          ))}
        </select>
      </label>
      <fieldset>
        <legend>{t('prefs.theme')}</legend>
        {THEMES.map(([value, label]) => (
          <label key={value} class="check">
            <input type="radio" name="theme" value={value} checked={s.theme === value} onChange={() => updateSettings({ theme: value })} />
            {label()}
          </label>
        ))}
      </fieldset>
      <label class="check">
        <input type="checkbox" checked={s.sendOnEnter} onChange={(e) => updateSettings({ sendOnEnter: e.currentTarget.checked })} />
        {t('prefs.enterSends')}
      </label>
      <label>
        {t('prefs.openIn')}
        <select
          value={s.defaultWorkspaceId ?? ''}
          onChange={(e) => updateSettings({ defaultWorkspaceId: e.currentTarget.value || null })}
          disabled={!workspaces.value}
        >
          <option value="">{t('prefs.openIn.list')}</option>
          {gone(s.defaultWorkspaceId, workspaces.value && list.map((w) => [w.id, w.name] as const)) && (
            <option value={s.defaultWorkspaceId!}>{t('prefs.openIn.gone')}</option>
          )}
          {list.map((w) => (
            <option key={w.id} value={w.id}>
              {w.name}
            </option>
          ))}
        </select>
      </label>
      <label>
        {t('prefs.startWith')}
        <select value={s.defaultModelId ?? ''} onChange={(e) => updateSettings({ defaultModelId: e.currentTarget.value || null })} disabled={!workspaces.value}>
          <option value="">{t('prefs.startWith.first')}</option>
          {gone(s.defaultModelId, workspaces.value && models) && <option value={s.defaultModelId!}>{t('prefs.startWith.gone')}</option>}
          {models.map(([id, name]) => (
            <option key={id} value={id}>
              {name}
            </option>
          ))}
        </select>
        <span class="muted small">{t('prefs.startWith.note')}</span>
      </label>
      <ErrorNote error={workspaces.error} />
    </section>
  );
}
