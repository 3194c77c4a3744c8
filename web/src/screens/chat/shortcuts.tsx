/**
 * The chat screen's keyboard shortcuts and the sheet that lists them (`?`, or Ctrl/Cmd+/, or the
 * "Keyboard shortcuts" button). Esc (stop, close) and Ctrl/Cmd+K (search) live with the drawer
 * (drawer.ts); the rest here. None fires while a modal dialog is open, and `?` only outside text fields.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { Icon } from '../../components/Icon';
import { t } from '../../i18n';

const MAC = typeof navigator !== 'undefined' && /Mac|iPhone|iPad/.test(navigator.platform);
const mod = () => (MAC ? 'Cmd' : t('keys.ctrl'));
const shift = () => t('keys.shift');
const esc = () => t('keys.esc');

/** `keys` as the keyboard labels them (in the language spoken), `what` in the language spoken. */
export const SHORTCUTS: ReadonlyArray<{ keys: () => string[]; what: () => string }> = [
  { keys: () => [mod(), shift(), 'O'], what: () => t('chat.newChat') },
  { keys: () => [mod(), 'K'], what: () => t('search.label') },
  { keys: () => [shift(), esc()], what: () => t('shortcuts.focus') },
  { keys: () => [esc()], what: () => t('shortcuts.stop') },
  { keys: () => [mod(), shift(), 'C'], what: () => t('shortcuts.copy') },
  { keys: () => ['?'], what: () => t('shortcuts.show') },
];

const inTextField = (t: EventTarget | null) => t instanceof HTMLElement && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName));

export interface ShortcutActions {
  newChat(): void;
  focusComposer(): void;
  /** the last answer's text (null: none yet) */
  lastAnswer(): string | null;
}

/** Installs the shortcuts; answers the sheet (when open), the "Keyboard shortcuts" button and the copy's spoken status. */
export function useChatShortcuts(actions: ShortcutActions) {
  const [sheet, setSheet] = useState(false);
  const [said, setSaid] = useState('');
  const latest = useRef(actions);
  latest.current = actions;
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.defaultPrevented || e.isComposing || document.querySelector('dialog[open]')) return;
      const mod = (e.ctrlKey || e.metaKey) && !e.altKey;
      const key = e.key.toLowerCase();
      const a = latest.current;
      if (mod && e.shiftKey && key === 'o') a.newChat();
      else if (e.shiftKey && !mod && e.key === 'Escape') a.focusComposer();
      else if (mod && e.shiftKey && key === 'c') {
        const text = a.lastAnswer();
        if (text === null) return;
        void navigator.clipboard?.writeText(text).then(
          () => setSaid(t('shortcuts.copied')),
          () => setSaid(t('shortcuts.copyRefused')),
        );
      } else if ((e.key === '?' && !mod && !inTextField(e.target)) || (mod && !e.shiftKey && e.key === '/')) setSheet(true);
      else return;
      e.preventDefault();
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, []);
  const button = (
    <button
      type="button"
      class="icon-button ghost shortcuts-button"
      aria-label={t('shortcuts.title')}
      title={t('shortcuts.buttonTitle')}
      onClick={() => setSheet(true)}
    >
      ?
    </button>
  );
  const view = (
    <>
      <span class="visually-hidden" role="status">
        {said}
      </span>
      {sheet && <ShortcutSheet onClose={() => setSheet(false)} />}
    </>
  );
  return { button, view };
}

function ShortcutSheet({ onClose }: { onClose: () => void }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const opener = document.activeElement as HTMLElement | null;
    ref.current?.showModal();
    return () => opener?.focus();
  }, []);
  return (
    <dialog ref={ref} class="shortcuts-dialog" aria-labelledby="shortcuts-title" onClose={onClose}>
      <header>
        <h2 id="shortcuts-title">{t('shortcuts.title')}</h2>
        <button type="button" class="icon-button" aria-label={t('common.close')} onClick={() => ref.current?.close()}>
          <Icon name="close" />
        </button>
      </header>
      <table class="shortcuts">
        <tbody>
          {SHORTCUTS.map((s) => (
            <tr key={s.what()}>
              <th scope="row">{s.what()}</th>
              <td>
                {s.keys().map((k, i) => (
                  <span key={k}>
                    {i > 0 && ' + '}
                    <kbd>{k}</kbd>
                  </span>
                ))}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <p class="muted small">{t('shortcuts.note')}</p>
    </dialog>
  );
}
