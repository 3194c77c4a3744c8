/** Copies a text to the clipboard and says so; falls back to selecting it when the clipboard is refused. */
import { useState } from 'preact/hooks';
import { t } from '../i18n';

export function CopyButton({ text, label = t('copy.copy'), what }: { text: string; label?: string; what: string }) {
  const [done, setDone] = useState<'copied' | 'failed' | null>(null);
  return (
    <button
      type="button"
      class="small-button"
      aria-label={t('confirm.named', { action: label, actionLower: label.toLowerCase(), what })}
      onClick={() => {
        if (!navigator.clipboard) return setDone('failed');
        navigator.clipboard.writeText(text).then(
          () => setDone('copied'),
          () => setDone('failed'),
        );
      }}
    >
      {done === 'copied' ? t('copy.copied') : done === 'failed' ? t('copy.selectIt') : label}
      <span class="visually-hidden" role="status">
        {done === 'copied' ? t('copy.whatCopied', { what }) : ''}
      </span>
    </button>
  );
}
