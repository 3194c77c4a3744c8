/**
 * An error as people read it: one message in the app's words (lib/problem-words.ts), and each
 * field to change when there are several. `labels` names a screen's fields as its form does.
 */
import { ApiError } from '../api/client';
import { problemWords, type FieldLabels } from '../lib/problem-words';

export function ErrorNote({ error, id, labels }: { error: unknown; id?: string; labels?: FieldLabels }) {
  if (!error) return null;
  const words = error instanceof ApiError ? problemWords(error.problem, labels) : { text: error instanceof Error ? error.message : String(error), fields: [] };
  return (
    <div class="error-note" role="alert" id={id}>
      <p>{words.text}</p>
      {words.fields.length > 0 && (
        <ul>
          {words.fields.map((f) => (
            <li key={f}>{f}</li>
          ))}
        </ul>
      )}
    </div>
  );
}
