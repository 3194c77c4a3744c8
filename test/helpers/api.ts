/**
 * The typed API client for tests: openapi-fetch over the server's own OpenAPI document (the same
 * generated `paths` the web app uses), with a fetch that hands each Request to `app.inject`, so
 * no socket is opened. Paths, path/query params, bodies and answers are type-checked.
 *
 *   const api = t.api(key);
 *   const { data, error, response } = await api.GET('/api/v1/workspaces/{workspaceId}', { params: { path: { workspaceId } } });
 *
 * A request that asks for `text/event-stream` gets its body as a live stream (`parseAs: 'stream'`
 * reads events while the server still writes); every other body is read whole.
 */
import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import createClient, { type Client } from 'openapi-fetch';
import type { components, paths } from '../../web/src/api/openapi.js';
import { multipart, type Part } from './multipart.js';

export type { components, paths };
export type Schemas = components['schemas'];
export type Api = Client<paths>;

export interface ApiOptions {
  /** headers sent with every request of this client (a session cookie, an Origin, a client IP…) */
  headers?: Record<string, string>;
  /** the client address the server sees (sign-in throttling is per address) */
  remoteAddress?: string;
}

const NULL_BODY = new Set([101, 204, 205, 304]);

/** A fetch that answers from the in-process app instead of the network. */
export function injectFetch(app: FastifyInstance, remoteAddress?: string): (input: Request) => Promise<Response> {
  return async (input) => {
    const url = new URL(input.url);
    const headers: Record<string, string> = {};
    input.headers.forEach((value, name) => {
      headers[name] = value;
    });
    const payload = input.body ? Buffer.from(await input.arrayBuffer()) : undefined;
    const stream = headers.accept?.includes('text/event-stream') ?? false;
    const res = await app.inject({
      method: input.method as 'GET',
      url: url.pathname + url.search,
      headers,
      ...(payload ? { payload } : {}),
      ...(remoteAddress ? { remoteAddress } : {}),
      ...(stream ? { payloadAsStream: true } : {}),
    });
    const out = new Headers();
    for (const [name, value] of Object.entries(res.headers)) {
      if (value === undefined) continue;
      for (const v of Array.isArray(value) ? value : [value]) out.append(name, String(v));
    }
    const body =
      NULL_BODY.has(res.statusCode) || input.method === 'HEAD' ? null : stream ? (Readable.toWeb(res.stream()) as ReadableStream<Uint8Array>) : res.rawPayload;
    return new Response(body, { status: res.statusCode, statusText: res.statusMessage, headers: out });
  };
}

/** A client for one caller: `key` becomes the Bearer token (null: anonymous). */
export function apiClient(app: FastifyInstance, key?: string | null, opts: ApiOptions = {}): Api {
  return createClient<paths>({
    baseUrl: 'http://localhost',
    fetch: injectFetch(app, opts.remoteAddress),
    headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...opts.headers },
  });
}

/** What every openapi-fetch call answers. */
export interface ApiResult<D = unknown> {
  data?: D;
  error?: unknown;
  response: Response;
}

/** The answer's data after checking its exact status; throws with the server's body otherwise. */
export function expectStatus<D>(result: ApiResult<D>, status: number): D {
  if (result.response.status !== status) {
    throw new Error(`expected ${status}, got ${result.response.status}: ${JSON.stringify(result.error ?? result.data)}`);
  }
  return result.data as D;
}

/**
 * A multipart/form-data body built by hand (helpers/multipart.ts) for a typed call: the path and
 * the answer stay typed, the bytes (field names, types, sizes) are the test's own.
 *   await api.POST('/api/v1/plus', multipartBody([{ name: 'title', value: 'x' }, file]))
 */
export function multipartBody(parts: Part[]): { body: never; bodySerializer: () => Buffer; headers: Record<string, string> } {
  const { payload, headers } = multipart(parts);
  return { body: {} as never, bodySerializer: () => payload, headers };
}
