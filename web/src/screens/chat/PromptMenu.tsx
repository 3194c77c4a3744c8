/**
 * The composer's `/` menu: typing `/` at the start of an empty message lists the prompt library
 * (the team's prompts, the person's own, the workspace's sample prompts), filtered by what follows
 * the `/`. Arrow keys move, Enter or a click picks, Esc closes. A prompt with `{{variables}}` asks
 * for each in a small form first; the text then goes into the message box to be read and sent.
 */
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api, data } from '../../api/client';
import { t } from '../../i18n';

export interface LibraryPrompt {
  key: string;
  title: string;
  content: string;
  variables: string[];
  /** where it comes from, shown beside it */
  source: 'Team' | 'Mine' | 'Sample';
}

/** The prompts the `/` menu offers in this workspace. */
export function usePromptLibrary(workspaceId: string): LibraryPrompt[] {
  const [saved, setSaved] = useState<LibraryPrompt[]>([]);
  const [samples, setSamples] = useState<LibraryPrompt[]>([]);
  useEffect(() => {
    data(api.GET('/api/v1/prompts')).then(
      (ps) =>
        setSaved(ps.map((p) => ({ key: p.id, title: p.title, content: p.content, variables: p.variables, source: p.scope === 'team' ? 'Team' : 'Mine' }))),
      () => setSaved([]),
    );
  }, []);
  useEffect(() => {
    data(api.GET('/api/v1/chat/{workspaceId}/sample-prompts', { params: { path: { workspaceId }, query: { limit: 20 } } })).then(
      (ps) => setSamples(ps.map((p, i) => ({ key: `sample-${i}`, title: p.content, content: p.content, variables: [], source: 'Sample' }))),
      () => setSamples([]),
    );
  }, [workspaceId]);
  return useMemo(() => [...saved, ...samples], [saved, samples]);
}

export const fillVariables = (content: string, values: Record<string, string>) =>
  content.replace(/\{\{\s*([^{}\s][^{}]{0,59}?)\s*\}\}/g, (all, name: string) => values[name] ?? all);

/** The menu's state for the composer: key handling for its textarea, the attributes that tie them, and what to render. */
export function usePromptMenu(text: string, setText: (t: string) => void, prompts: LibraryPrompt[], textarea: { current: HTMLTextAreaElement | null }) {
  const [active, setActive] = useState(0);
  const [dismissed, setDismissed] = useState<string | null>(null);
  const [filling, setFilling] = useState<LibraryPrompt | null>(null);
  const open = filling === null && text.startsWith('/') && !text.includes('\n') && dismissed !== text;
  const q = text.slice(1).trim().toLowerCase();
  const matches = useMemo(
    () => (open ? prompts.filter((p) => p.title.toLowerCase().includes(q) || p.content.toLowerCase().includes(q)).slice(0, 12) : []),
    [open, prompts, q],
  );
  useEffect(() => setActive(0), [q]);
  const insert = (t: string) => {
    setText(t);
    requestAnimationFrame(() => {
      textarea.current?.focus();
      textarea.current?.setSelectionRange(t.length, t.length);
    });
  };
  const pick = (p: LibraryPrompt) => {
    if (p.variables.length > 0) setFilling(p);
    else insert(p.content);
  };
  /** true: the key was the menu's */
  const onKeyDown = (e: KeyboardEvent): boolean => {
    if (!open || matches.length === 0) return false;
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      setActive((i) => (i + (e.key === 'ArrowDown' ? 1 : matches.length - 1)) % matches.length);
    } else if ((e.key === 'Enter' && !e.shiftKey) || e.key === 'Tab') pick(matches[Math.min(active, matches.length - 1)]!);
    else if (e.key === 'Escape') setDismissed(text);
    else return false;
    e.preventDefault();
    e.stopPropagation();
    return true;
  };
  const shown = open && matches.length > 0;
  // the message box stays a textbox (its role is what people and tests know it by); it points at the open list
  const inputProps = {
    ...(shown ? { 'aria-controls': 'prompt-menu' } : {}),
    'aria-autocomplete': 'list' as const,
    ...(shown ? { 'aria-activedescendant': `prompt-option-${active}` } : {}),
  };
  const view = filling ? (
    <VariableForm
      prompt={filling}
      onDone={(t) => {
        setFilling(null);
        insert(t ?? text);
      }}
    />
  ) : shown ? (
    <ul id="prompt-menu" class="prompt-menu" role="listbox" aria-label={t('prompts.label')}>
      {matches.map((p, i) => (
        <li
          key={p.key}
          id={`prompt-option-${i}`}
          role="option"
          aria-selected={i === active}
          onMouseDown={(e) => {
            // keep the focus in the message box
            e.preventDefault();
            pick(p);
          }}
        >
          <span class="prompt-title">{p.title}</span>
          <span class="muted small">{p.source === 'Team' ? t('prompts.team') : p.source === 'Mine' ? t('prompts.mine') : t('prompts.sample')}</span>
        </li>
      ))}
    </ul>
  ) : null;
  return { onKeyDown, inputProps, view };
}

function VariableForm({ prompt, onDone }: { prompt: LibraryPrompt; onDone: (text: string | null) => void }) {
  const [values, setValues] = useState<Record<string, string>>({});
  const first = useRef<HTMLInputElement>(null);
  useEffect(() => first.current?.focus(), []);
  return (
    <form
      class="prompt-variables"
      aria-label={t('prompts.fillIn', { title: prompt.title })}
      onSubmit={(e) => {
        e.preventDefault();
        onDone(fillVariables(prompt.content, values));
      }}
      onKeyDown={(e) => {
        if (e.key !== 'Escape') return;
        e.preventDefault();
        e.stopPropagation();
        onDone(null);
      }}
    >
      <strong>{prompt.title}</strong>
      {prompt.variables.map((v, i) => (
        <label key={v}>
          {v}
          <input ref={i === 0 ? first : undefined} value={values[v] ?? ''} onInput={(e) => setValues({ ...values, [v]: e.currentTarget.value })} />
        </label>
      ))}
      <div class="edit-buttons">
        <button type="button" class="ghost small" onClick={() => onDone(null)}>
          {t('common.cancel')}
        </button>
        <button type="submit" class="small">
          {t('prompts.insert')}
        </button>
      </div>
    </form>
  );
}
