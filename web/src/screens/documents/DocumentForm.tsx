/** Create or edit a Plus entry's text fields (title, description, context, public flag). */
import { useState } from 'preact/hooks';
import { ApiError, problemOf, raise, networkProblem, type Plus } from '../../api/client';
import { ErrorNote } from '../../components/Problem';
import { t } from '../../i18n';

export interface PlusFields {
  title: string;
  description: string;
  context: string;
  isPublic: boolean;
}

/** POST /api/v1/plus (multipart, no files): creates an entry, or updates the one named by `id`. */
export async function savePlus(fields: PlusFields, id?: string): Promise<Plus> {
  const form = new FormData();
  if (id) form.append('id', id);
  form.append('title', fields.title);
  form.append('description', fields.description);
  form.append('context', fields.context);
  form.append('isPublic', String(fields.isPublic));
  let res: Response;
  try {
    res = await fetch('/api/v1/plus', { method: 'POST', body: form, credentials: 'same-origin' });
  } catch {
    return raise(networkProblem());
  }
  if (!res.ok) return raise(await problemOf(res));
  return (await res.json()) as Plus;
}

interface Props {
  initial?: Plus;
  submitLabel: string;
  onSaved: (p: Plus) => void;
  onCancel?: () => void;
}

export function DocumentForm({ initial, submitLabel, onSaved, onCancel }: Props) {
  const [f, setF] = useState<PlusFields>({
    title: initial?.title ?? '',
    description: initial?.description ?? '',
    context: initial?.context ?? '',
    isPublic: initial?.isPublic ?? false,
  });
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  return (
    <form
      class="stack"
      onSubmit={(e) => {
        e.preventDefault();
        if (!f.title.trim()) return setError(new Error(t('docs.needTitle')));
        setBusy(true);
        setError(null);
        savePlus(f, initial?.id)
          .then(onSaved, (err: unknown) => setError(err instanceof ApiError || err instanceof Error ? err : new Error(String(err))))
          .finally(() => setBusy(false));
      }}
    >
      <label>
        {t('library.titleField')}
        <input value={f.title} maxLength={2000} required onInput={(e) => setF({ ...f, title: e.currentTarget.value })} />
      </label>
      <label>
        {t('docs.description')}
        <input value={f.description} maxLength={2000} onInput={(e) => setF({ ...f, description: e.currentTarget.value })} />
      </label>
      <label>
        {t('docs.contextText')}
        <textarea rows={4} value={f.context} maxLength={200000} onInput={(e) => setF({ ...f, context: e.currentTarget.value })} />
        <span class="hint">{t('docs.contextHint')}</span>
      </label>
      <label class="check">
        <input type="checkbox" checked={f.isPublic} onChange={(e) => setF({ ...f, isPublic: e.currentTarget.checked })} />
        {t('docs.publicField')}
      </label>
      <ErrorNote error={error} />
      <div class="actions">
        <button type="submit" class="primary" disabled={busy}>
          {submitLabel}
        </button>
        {onCancel && (
          <button type="button" onClick={onCancel}>
            {t('common.cancel')}
          </button>
        )}
      </div>
    </form>
  );
}
