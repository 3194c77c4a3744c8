/**
 * Personal preferences, kept in this browser (localStorage; docs/DECISIONS.md, "Personal
 * settings"): the theme, the language, whether Enter sends, the workspace the app opens in and the
 * model a chat starts with. Changes apply at once, in every tab of the app.
 */
import { useEffect, useState } from 'preact/hooks';
import { browserLanguage, LANGUAGES, setLanguage, type Language } from './i18n';

export type Theme = 'system' | 'light' | 'dark';

export interface Settings {
  theme: Theme;
  /** the app's language; 'system': the first of the browser's languages the app speaks (i18n/) */
  language: 'system' | Language;
  /** true: Enter sends and Shift+Enter adds a line; false: Enter adds a line and Ctrl/⌘+Enter sends */
  sendOnEnter: boolean;
  /** the workspace the app opens in (null: the list of workspaces) */
  defaultWorkspaceId: string | null;
  /** the model a chat starts with when its workspace offers it (null: the workspace's first) */
  defaultModelId: string | null;
}

const KEY = 'atrium.settings';
const DEFAULTS: Settings = { theme: 'system', language: 'system', sendOnEnter: true, defaultWorkspaceId: null, defaultModelId: null };
const THEMES: readonly Theme[] = ['system', 'light', 'dark'];

/** What is stored, field by field: a value of the wrong kind (an older version, a hand edit) is the default. */
function read(): Settings {
  let raw: Partial<Record<keyof Settings, unknown>> = {};
  try {
    raw = (JSON.parse(localStorage.getItem(KEY) ?? '{}') as typeof raw) ?? {};
  } catch {
    // unreadable: the defaults
  }
  const id = (v: unknown) => (typeof v === 'string' && v.length > 0 && v.length <= 100 ? v : null);
  return {
    theme: THEMES.includes(raw.theme as Theme) ? (raw.theme as Theme) : DEFAULTS.theme,
    language: LANGUAGES.includes(raw.language as Language) ? (raw.language as Language) : DEFAULTS.language,
    sendOnEnter: typeof raw.sendOnEnter === 'boolean' ? raw.sendOnEnter : DEFAULTS.sendOnEnter,
    defaultWorkspaceId: id(raw.defaultWorkspaceId),
    defaultModelId: id(raw.defaultModelId),
  };
}

let current = read();
const listeners = new Set<(s: Settings) => void>();

function publish(): void {
  applyTheme();
  void applyLanguage();
  for (const l of listeners) l(current);
}

// Another tab changed them.
if (typeof window !== 'undefined') {
  window.addEventListener('storage', (e) => {
    if (e.key !== KEY) return;
    current = read();
    publish();
  });
}

export function settings(): Settings {
  return current;
}

export function updateSettings(patch: Partial<Settings>): void {
  current = { ...current, ...patch };
  try {
    localStorage.setItem(KEY, JSON.stringify(current));
  } catch {
    // storage full or refused: the change holds until the page is closed
  }
  publish();
}

/** The page's theme: the system's unless the person chose one (styles.css reads `data-theme`). */
export function applyTheme(): void {
  const root = document.documentElement;
  if (current.theme === 'system') delete root.dataset.theme;
  else root.dataset.theme = current.theme;
}

/** The language the settings choose: the person's, else the browser's. */
export function chosenLanguage(): Language {
  return current.language === 'system' ? browserLanguage() : current.language;
}

/** Speaks the chosen language (its catalogue loaded first: i18n/index.ts); the screens then render again. */
export function applyLanguage(): Promise<void> {
  return setLanguage(chosenLanguage());
}

export function useSettings(): Settings {
  const [s, set] = useState(current);
  useEffect(() => {
    listeners.add(set);
    set(current);
    return () => void listeners.delete(set);
  }, []);
  return s;
}

/** The model a new chat in a workspace starts with: the person's default when the workspace offers it, else its first. */
export function preferredModel(models: ReadonlyArray<{ modelId: string }>): string {
  const d = current.defaultModelId;
  return d && models.some((m) => m.modelId === d) ? d : (models[0]?.modelId ?? '');
}
