/**
 * A destructive action asked twice: the first click shows "Delete <what>?" with a confirming
 * button and Cancel, in place (no modal to trap focus in, works the same on a phone).
 */
import { useState } from 'preact/hooks';
import { t } from '../i18n';

interface Props {
  /** Button text, e.g. "Delete". */
  label: string;
  /** What the action applies to, for the accessible name and the question: "report.pdf". */
  what: string;
  confirmLabel?: string;
  onConfirm: () => Promise<unknown> | void;
  disabled?: boolean;
}

export function ConfirmButton({ label, what, confirmLabel, onConfirm, disabled }: Props) {
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  if (!asking) {
    return (
      <button
        type="button"
        class="danger small-button"
        aria-label={t('confirm.named', { action: label, actionLower: label.toLowerCase(), what })}
        disabled={disabled}
        onClick={() => setAsking(true)}
      >
        {label}
      </button>
    );
  }
  return (
    <span class="confirm" role="group" aria-label={t('confirm.group', { action: label.toLowerCase(), what })}>
      <span>{t('confirm.question', { action: label, actionLower: label.toLowerCase(), what })}</span>
      <button
        type="button"
        class="danger small-button"
        disabled={busy}
        ref={(el) => el?.focus()}
        onClick={() => {
          setBusy(true);
          void Promise.resolve(onConfirm()).finally(() => {
            setBusy(false);
            setAsking(false);
          });
        }}
      >
        {confirmLabel ?? t('confirm.yes', { action: label.toLowerCase() })}
      </button>
      <button type="button" class="small-button" onClick={() => setAsking(false)}>
        {t('common.cancel')}
      </button>
    </span>
  );
}
