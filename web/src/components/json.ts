/**
 * An untyped JSON call, for what the generated client cannot type: a request field a newer server
 * accepts (context-for-prompt's `explain`).
 * Failures become ApiErrors exactly as with the typed client.
 */
import { networkProblem, problemOf, raise } from '../api/client';

export async function sendJson<T>(method: 'GET' | 'POST' | 'DELETE', url: string, body?: unknown): Promise<T> {
  let res: Response;
  try {
    res = await fetch(url, {
      method,
      credentials: 'same-origin',
      ...(body !== undefined ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) } : {}),
    });
  } catch {
    return raise(networkProblem());
  }
  if (!res.ok) return raise(await problemOf(res));
  return (res.status === 204 ? undefined : await res.json()) as T;
}
