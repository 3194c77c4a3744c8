import type { ServerResponse } from 'node:http';

/**
 * The security headers of every answer (docs/DECISIONS.md, "Security headers"): a
 * Content-Security-Policy chosen by path, and the same framing, sniffing and referrer headers
 * everywhere. They are set on the raw response (`setHeader`) as soon as a request arrives, so
 * they ride along whatever answers it: a route, a problem, the web app's files, a hijacked event
 * stream (its `writeHead` keeps them) and the starting server's 503 (main.ts). A route that needs
 * a header of its own sets it on the reply, which wins.
 *
 * This file imports nothing at run time: main.ts uses it before the rest of the application loads.
 */

const policy = (directives: Record<string, string>) =>
  Object.entries(directives)
    .map(([name, value]) => (value ? `${name} ${value}` : name))
    .join('; ');

/**
 * The web app (index.html and the files of the build). Only the app's own scripts and styles;
 * images from the app itself or in data:/blob: URLs, so an image a model's answer points at is
 * never fetched (the app shows it as a link: web/src/lib/markdown.ts). Preact sets `style`
 * through the CSSOM, which style-src does not govern, so no 'unsafe-inline' is needed.
 */
export const APP_POLICY = policy({
  'default-src': "'self'",
  'script-src': "'self'",
  'style-src': "'self'",
  'img-src': "'self' data: blob:",
  'media-src': "'self' blob:",
  'font-src': "'self'",
  'connect-src': "'self'",
  'object-src': "'none'",
  'frame-src': "'none'",
  // The app's service worker (/sw.js) and nothing else.
  'worker-src': "'self'",
  'manifest-src': "'self'",
  'base-uri': "'none'",
  'form-action': "'self'",
  'frame-ancestors': "'none'",
});

/**
 * Swagger UI at /docs: its scripts are its own files, but its bundle injects a `<style>` element
 * (refused without 'unsafe-inline', measured in Chromium) and draws icons from data: URLs. Looser
 * than the app's, for that route only; it shows no answer of a model.
 */
export const DOCS_POLICY = policy({
  'default-src': "'self'",
  'script-src': "'self'",
  'style-src': "'self' 'unsafe-inline'",
  'img-src': "'self' data:",
  'font-src': "'self' data:",
  'connect-src': "'self'",
  'object-src': "'none'",
  'base-uri': "'none'",
  'form-action': "'none'",
  'frame-ancestors': "'none'",
});

/**
 * Everything else (the API, /v1, /openapi.json, /healthz): data, never a page. Opened in a tab
 * it loads nothing and runs nothing (`sandbox`), whatever the body holds (an uploaded file's bytes).
 */
export const API_POLICY = policy({
  'default-src': "'none'",
  'base-uri': "'none'",
  'form-action': "'none'",
  'frame-ancestors': "'none'",
  sandbox: '',
});

const COMMON: ReadonlyArray<[string, string]> = [
  ['x-frame-options', 'DENY'],
  ['x-content-type-options', 'nosniff'],
  // Not no-referrer: under it a browser sends `Origin: null` on the app's own POSTs, which the
  // CSRF check refuses. Links in answers carry rel=noreferrer themselves.
  ['referrer-policy', 'strict-origin-when-cross-origin'],
];

const API_PATHS = /^\/(?:api|v1)(?:[/?#]|$)|^\/(?:openapi\.json|healthz|readyz)(?:[?#]|$)/;
const DOCS_PATHS = /^\/docs(?:[/?#]|$)/;

/** The Content-Security-Policy for a request's URL (path and query as received). */
export function policyFor(url: string): string {
  if (DOCS_PATHS.test(url)) return DOCS_POLICY;
  if (API_PATHS.test(url)) return API_POLICY;
  return APP_POLICY;
}

/** Set the security headers for `url` on a response that has not been sent yet. */
export function setSecurityHeaders(url: string | undefined, res: Pick<ServerResponse, 'setHeader' | 'headersSent'>): void {
  if (res.headersSent) return;
  res.setHeader('content-security-policy', policyFor(url ?? '/'));
  for (const [name, value] of COMMON) res.setHeader(name, value);
}
