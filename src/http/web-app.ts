import { existsSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/**
 * The web app, served from WEB_DIR (the Vite build) at `/`:
 * - a GET/HEAD of an existing file of the build answers that file (`/assets/*` — content-hashed
 *   names — cached for a year, immutable; everything else `no-cache`, revalidated by ETag);
 * - any other GET/HEAD path answers `index.html` (the app routes in the browser), except paths of
 *   the API and the server (`/api…`, `/v1…`, `/scim…`, `/docs…`, `/openapi.json`, `/healthz`, `/readyz`) and
 *   paths that look like files (under `/assets/`, or with an extension): those keep their 404
 *   problem answer, so a missing script never arrives as HTML;
 * - other methods keep their 404/405 problem answers.
 * It runs only for requests no route took (`request.is404`), as an `onRequest` hook rather than a
 * wildcard route, so the 405 table (http/problem.ts) does not learn a `GET /*` that would turn
 * every unknown POST into a 405. Nothing is read from the directory at start-up but one stat of
 * index.html; without it, the server starts and `/` says the app is not built. Files are sent by
 * `@fastify/send` (ETag, Last-Modified, 304, ranges, HEAD; what `@fastify/static` is built on),
 * loaded with the first file asked for: `@fastify/static` itself loads a glob library at import,
 * which cost start-up ~20 ms for a feature (directory listing, wildcard routes) this never uses.
 */
const RESERVED = /^\/(?:api|v1|scim)(?:\/|$)|^\/docs(?:\/|$)|^\/(?:openapi\.json|healthz|readyz)$/;
const LOOKS_LIKE_FILE = /^\/assets\/|\.[A-Za-z0-9]+$/;
const IMMUTABLE = 'public, max-age=31536000, immutable';

const NOT_BUILT = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Atrium</title></head>
<body><h1>Atrium</h1><p>The web app is not built. Run <code>npm run build</code> and restart the server.
The API is up: see <a href="/docs">/docs</a>.</p></body></html>
`;

/** The decoded path of a request, or null when it cannot be a file of ours (bad escape, NUL, dot segment). */
function decodedPath(request: FastifyRequest): string | null {
  const raw = request.url.split('?')[0] ?? '/';
  let p: string;
  try {
    p = decodeURIComponent(raw);
  } catch {
    return null;
  }
  if (p.includes('\0') || p.includes('\\') || p.split('/').some((seg) => seg.startsWith('.'))) return null;
  return p;
}

async function isFile(root: string, p: string): Promise<boolean> {
  const abs = path.resolve(root, `.${p}`);
  if (!abs.startsWith(root + path.sep)) return false;
  try {
    return (await stat(abs)).isFile();
  } catch {
    return false;
  }
}

type Send = typeof import('@fastify/send').default;
let sender: Promise<Send> | null = null;

/** Types of the files the build writes compressed copies of (web/vite.config.mjs). */
const PRECOMPRESSED_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.json': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.webmanifest': 'application/manifest+json',
};
/** Whether Accept-Encoding accepts `encoding` (named, and not with q=0). */
const accepts = (encoding: string) => new RegExp(`(?:^|,)\\s*${encoding}\\s*(?:,|;(?!\\s*q=0(?:\\.0*)?\\s*(?:,|$))|$)`);
/** Content-Encoding, the suffix of the build's compressed copy and its Accept-Encoding test, in order of preference. */
const ENCODINGS: Array<[string, string, RegExp]> = [
  ['br', '.br', accepts('br')],
  ['gzip', '.gz', accepts('gzip')],
];

/** The compressed copy of `p` the client accepts and the build wrote, if any: [encoding, suffix]. */
async function compressedCopy(request: FastifyRequest, root: string, p: string): Promise<[string, string] | null> {
  const accepted = request.headers['accept-encoding'];
  if (!PRECOMPRESSED_TYPES[path.extname(p)] || !accepted) return null;
  for (const [encoding, suffix, test] of ENCODINGS) if (test.test(accepted) && (await isFile(root, p + suffix))) return [encoding, suffix];
  return null;
}

/**
 * Answer the file at `p` (a path checked by decodedPath, relative to `root`) with its caching
 * headers: the build's brotli or gzip copy when the client accepts one (`Vary: Accept-Encoding`).
 */
async function sendFile(request: FastifyRequest, reply: FastifyReply, root: string, p: string, status?: number): Promise<FastifyReply> {
  const send = await (sender ??= import('@fastify/send').then((m) => m.default));
  const copy = await compressedCopy(request, root, p);
  const r = await send(request.raw, encodeURI(copy ? p + copy[1] : p), { root, dotfiles: 'ignore', index: false, cacheControl: false });
  if (r.type !== 'file') throw Object.assign(new Error(`${p} could not be sent`), { statusCode: r.statusCode });
  reply.code(status ?? r.statusCode).headers(r.headers as Record<string, string>);
  if (PRECOMPRESSED_TYPES[path.extname(p)]) reply.header('vary', 'Accept-Encoding');
  if (copy) reply.header('content-encoding', copy[0]).header('content-type', PRECOMPRESSED_TYPES[path.extname(p)]!);
  return reply.send(r.stream);
}

/** A shared thread's page (modules/chat/share.ts). */
const SHARE_PAGE = /^\/share\/([^/]+)$/;

/**
 * `shareExists`: whether a share link is live. Its page is the app's index.html either way, with
 * 404 for a revoked or unknown link, never cached (it must die at once when revoked).
 */
export function registerWebApp(app: FastifyInstance, opts: { webDir: string; shareExists?: (token: string) => Promise<boolean> }): void {
  const root = path.resolve(opts.webDir);
  const built = existsSync(path.join(root, 'index.html'));

  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    if (!request.is404 || (request.method !== 'GET' && request.method !== 'HEAD')) return;
    const p = decodedPath(request);
    if (p === null || RESERVED.test(p)) return;
    // A share's page: the app's index either way, 404 for a link that is not live, never cached.
    const share = SHARE_PAGE.exec(p);
    const status = share && opts.shareExists ? ((await opts.shareExists(share[1]!)) ? 200 : 404) : null;
    if (!built) {
      if (LOOKS_LIKE_FILE.test(p)) return;
      return reply
        .code(status ?? 200)
        .type('text/html; charset=utf-8')
        .header('cache-control', 'no-store')
        .send(NOT_BUILT);
    }
    if (status !== null) {
      // a conditional GET must not turn the answer into a 304
      delete request.raw.headers['if-none-match'];
      delete request.raw.headers['if-modified-since'];
      reply.header('cache-control', 'no-store');
      return sendFile(request, reply, root, '/index.html', status);
    }
    if (p !== '/' && (await isFile(root, p))) {
      reply.header('cache-control', p.startsWith('/assets/') ? IMMUTABLE : 'no-cache');
      return sendFile(request, reply, root, p);
    }
    if (LOOKS_LIKE_FILE.test(p)) return;
    reply.header('cache-control', 'no-cache');
    return sendFile(request, reply, root, '/index.html');
  });
}
