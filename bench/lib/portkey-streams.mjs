/**
 * Preloaded into the Portkey gateway the bench runs (bench/lib/portkey.ts): its release 1.15.2
 * appends its own headers to a streamed upstream response as fetch returned it, whose headers are
 * immutable, so on Node every streamed request fails with `TypeError: immutable`. A streamed
 * upstream response is handed on as a new Response over the same body (mutable headers), which is
 * what its own proposed fix does; other responses are untouched.
 */
const upstreamFetch = globalThis.fetch;
const { Response } = globalThis;
globalThis.fetch = async (...args) => {
  const res = await upstreamFetch(...args);
  if (!(res.headers.get('content-type') ?? '').includes('text/event-stream')) return res;
  return new Response(res.body, { status: res.status, statusText: res.statusText, headers: res.headers });
};
