/** An error as people read it: the server's detail, and each invalid field when there are some. */
import { ApiError } from '../api/client';

export function ErrorNote({ error, id }: { error: unknown; id?: string }) {
  if (!error) return null;
  const problem = error instanceof ApiError ? error.problem : null;
  const text = problem ? problem.detail || problem.title : error instanceof Error ? error.message : String(error);
  return (
    <div class="error-note" role="alert" id={id}>
      <p>{text}</p>
      {problem?.errors && problem.errors.length > 0 && (
        <ul>
          {problem.errors.map((e) => (
            <li key={e.path}>
              <code>{e.path || '(body)'}</code> {e.message}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
