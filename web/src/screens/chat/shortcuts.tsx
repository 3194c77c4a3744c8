/**
 * The chat screen's keyboard shortcuts and the sheet that lists them (`?`, or Ctrl/Cmd+/, or the
 * "Keyboard shortcuts" button). Esc (stop, close) and Ctrl/Cmd+K (search) live with the drawer
 * (drawer.ts); the rest here. None fires while a modal dialog is open, and `?` only outside text fields.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { Icon } from '../../components/Icon';

const MOD = typeof navigator !== 'undefined' && /Mac|iPhone|iPad/.test(navigator.platform) ? 'Cmd' : 'Ctrl';

export const SHORTCUTS: ReadonlyArray<{ keys: string[]; what: string }> = [
  { keys: [MOD, 'Shift', 'O'], what: 'New chat' },
  { keys: [MOD, 'K'], what: 'Search chats' },
  { keys: ['Shift', 'Esc'], what: 'Focus the message box' },
  { keys: ['Esc'], what: 'Stop the answer (or close what is open)' },
  { keys: [MOD, 'Shift', 'C'], what: 'Copy the last answer' },
  { keys: ['?'], what: 'Show these shortcuts' },
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
          () => setSaid('Last answer copied'),
          () => setSaid('The clipboard refused the answer'),
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
      aria-label="Keyboard shortcuts"
      title="Keyboard shortcuts (?)"
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
        <h2 id="shortcuts-title">Keyboard shortcuts</h2>
        <button type="button" class="icon-button" aria-label="Close" onClick={() => ref.current?.close()}>
          <Icon name="close" />
        </button>
      </header>
      <table class="shortcuts">
        <tbody>
          {SHORTCUTS.map((s) => (
            <tr key={s.what}>
              <th scope="row">{s.what}</th>
              <td>
                {s.keys.map((k, i) => (
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
      <p class="muted small">In the message box: Enter sends, Shift+Enter starts a new line. Every control is reachable with Tab.</p>
    </dialog>
  );
}
