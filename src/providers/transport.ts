/**
 * The fetch the OpenAI SDK is given: undici's `request` on one shared keep-alive Agent (a
 * connection pool per origin), its answer handed back as a Response over undici's own body stream.
 * Per call this skips what the global fetch builds and throws away — a Request with its header
 * guards, a web stream for the body sent: a call to a loopback provider took 0.53 ms at p50
 * instead of 0.67, and 64 connections got about a third more turns through (docs/DECISIONS.md,
 * "Gateway hot path"). Redirects are never followed (undici's `request` does not
 * follow them): a 3xx reaches the SDK as the answer, as `redirect: 'manual'` did. A body that is
 * not text or bytes (a multipart form) goes through the global fetch, unchanged.
 */
import { Agent, type Dispatcher } from 'undici';

let agent: Agent | null = null;

/** Close the kept-alive connections (the app's close; calls in flight finish first); the next call opens new ones. */
export async function closeProviderConnections(): Promise<void> {
  const closing = agent;
  agent = null;
  await closing?.close();
}

/** Statuses whose answer has no body (a Response refuses one). */
const NULL_BODY = new Set([101, 204, 205, 304]);

function requestHeaders(h: RequestInit['headers']): Record<string, string> {
  if (!h) return {};
  if (h instanceof Headers) return Object.fromEntries(h);
  if (Array.isArray(h)) return Object.fromEntries(h);
  return h as Record<string, string>;
}

function answerHeaders(h: Record<string, string | string[] | undefined>): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const [name, value] of Object.entries(h)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) out.push([name, v]);
  }
  return out;
}

export async function providerFetch(input: string | URL | Request, init: RequestInit = {}): Promise<Response> {
  const body = init.body;
  if (input instanceof Request || (body != null && typeof body !== 'string' && !(body instanceof Uint8Array))) return fetch(input, init);
  const url = typeof input === 'string' ? new URL(input) : input;
  const method = (init.method ?? 'GET').toUpperCase() as Dispatcher.HttpMethod;
  agent ??= new Agent({ keepAliveTimeout: 60_000, keepAliveMaxTimeout: 600_000 });
  const answer = await agent.request({
    origin: url.origin,
    path: `${url.pathname}${url.search}`,
    method,
    headers: requestHeaders(init.headers),
    body: body ?? null,
    signal: init.signal ?? null,
  });
  const empty = NULL_BODY.has(answer.statusCode) || method === 'HEAD';
  if (empty) await answer.body.dump();
  return new Response(empty ? null : (answer.body as unknown as ReadableStream<Uint8Array>), {
    status: answer.statusCode,
    headers: answerHeaders(answer.headers),
  });
}
