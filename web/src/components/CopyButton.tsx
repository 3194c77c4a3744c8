/** Copies a text to the clipboard and says so; falls back to selecting it when the clipboard is refused. */
import { useState } from 'preact/hooks';

export function CopyButton({ text, label = 'Copy', what }: { text: string; label?: string; what: string }) {
  const [done, setDone] = useState<'copied' | 'failed' | null>(null);
  return (
    <button
      type="button"
      class="small-button"
      aria-label={`${label} ${what}`}
      onClick={() => {
        if (!navigator.clipboard) return setDone('failed');
        navigator.clipboard.writeText(text).then(
          () => setDone('copied'),
          () => setDone('failed'),
        );
      }}
    >
      {done === 'copied' ? 'Copied' : done === 'failed' ? 'Select and copy it' : label}
      <span class="visually-hidden" role="status">
        {done === 'copied' ? `${what} copied` : ''}
      </span>
    </button>
  );
}
