/**
 * The one way the app talks to Atrium: a typed openapi-fetch client (types generated from the
 * server's own OpenAPI document by `npm run gen:client`), authenticated by the session cookie.
 * Every failure becomes an ApiError carrying the server's problem+json, so screens show the
 * server's own words; a 401 also tells the session (the app goes back to the sign-in screen).
 */
import createClient from 'openapi-fetch';
import { problemWords } from '../lib/problem-words';
import type { components, paths } from './openapi';
import { t } from '../i18n';

export type Schemas = components['schemas'];
export type Problem = Schemas['Problem'];
export type Workspace = Schemas['Workspace'];
export type WorkspaceModel = Schemas['WorkspaceModel'];
export type Model = Schemas['Model'];
export type ChatThread = Schemas['ChatThread'];
export type ChatThreadFull = Schemas['ChatThread_Full'];
export type StoredMessage = ChatThreadFull['messages'][number];
export type Source = StoredMessage['sources'][number];
export type StreamEvent = Schemas['ChatStreamEvent'];
export type Plus = Schemas['Plus'];
export type PlusSummary = Schemas['PlusSummary'];

/** A failed call: the server's problem document, or one made up for a network failure. */
export class ApiError extends Error {
  constructor(readonly problem: Problem) {
    super(problem.detail || problem.title);
  }
  get status(): number {
    return this.problem.status;
  }
  get code(): string {
    return this.problem.code;
  }
}

type UnauthorizedListener = () => void;
const unauthorizedListeners = new Set<UnauthorizedListener>();
/** Called whenever the server answers 401 (the session ended or was revoked). */
export function onUnauthorized(listener: UnauthorizedListener): () => void {
  unauthorizedListeners.add(listener);
  return () => unauthorizedListeners.delete(listener);
}

export function networkProblem(detail = t('net.unreachable')): Problem {
  return { type: 'about:blank', title: t('net.lost'), status: 0, detail, code: 'network_error' };
}

/** Reads a failed response as a problem document whatever its body is. */
export async function problemOf(res: Response): Promise<Problem> {
  let body: unknown = null;
  try {
    body = await res.json();
  } catch {
    // not JSON (a proxy's HTML page, an empty body)
  }
  const p = body as Partial<Problem> | null;
  if (p && typeof p === 'object' && typeof p.status === 'number' && typeof p.code === 'string') return p as Problem;
  return {
    type: 'about:blank',
    title: res.statusText || t('tools.error'),
    status: res.status,
    detail: t('net.status', { status: String(res.status) }),
    code: 'http_error',
  };
}

export function raise(problem: Problem): never {
  if (problem.status === 401) for (const l of unauthorizedListeners) l();
  throw new ApiError(problem);
}

export const api = createClient<paths>({ baseUrl: '', credentials: 'same-origin' });
api.use({
  async onResponse({ response }) {
    if (!response.ok) raise(await problemOf(response.clone()));
    return undefined;
  },
  onError({ error }) {
    if (error instanceof ApiError) throw error;
    if (error instanceof DOMException && error.name === 'AbortError') throw error;
    raise(networkProblem());
  },
});

/**
 * The data of a call whose failure already threw (see the middleware above):
 * `const ws = await data(api.GET('/api/v1/workspaces'))`.
 */
export async function data<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const r = await call;
  if (r.data === undefined) {
    // 204 and other empty answers
    return undefined as T;
  }
  return r.data;
}

/** An error's one message for people (see components/Problem.tsx for the whole note). */
export function messageOf(err: unknown): string {
  if (err instanceof ApiError) return problemWords(err.problem).text;
  if (err instanceof Error) return err.message;
  return String(err);
}
