/**
 * The filter bar of the report screens (prompt logs, usage): a From–To day range, the screen's
 * own fields, and a submit button. It edits a draft; the screen applies it on submit, so typing
 * a date does not reload the report at every key.
 */
import type { ComponentChildren } from 'preact';
import { dayToIso } from './format';
import { t } from '../i18n';

export interface DayRange {
  /** YYYY-MM-DD or '' (open) */
  from: string;
  to: string;
}

export function FilterBar<T extends DayRange>({
  label,
  draft,
  onDraft,
  onApply,
  submit,
  children,
}: {
  label: string;
  draft: T;
  onDraft: (next: T) => void;
  onApply: (applied: T) => void;
  submit: string;
  children?: ComponentChildren;
}) {
  return (
    <form
      class="filters"
      aria-label={label}
      onSubmit={(e) => {
        e.preventDefault();
        onApply({ ...draft });
      }}
    >
      <label>
        {t('filter.from')}
        <input type="date" value={draft.from} max={draft.to || undefined} onInput={(e) => onDraft({ ...draft, from: e.currentTarget.value })} />
      </label>
      <label>
        {t('filter.to')}
        <input type="date" value={draft.to} min={draft.from || undefined} onInput={(e) => onDraft({ ...draft, to: e.currentTarget.value })} />
      </label>
      {children}
      <button type="submit" class="primary">
        {submit}
      </button>
    </form>
  );
}

/** The range as ISO instants: `from` the start of its day, `to` the start of the day after (exclusive); open ends left out. */
export function isoRange(r: DayRange): { from?: string; to?: string } {
  const from = dayToIso(r.from);
  const to = dayToIso(r.to, true);
  return { ...(from ? { from } : {}), ...(to ? { to } : {}) };
}
