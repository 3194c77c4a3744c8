import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import type { AuthService } from '../modules/teams/auth-service.js';
import type { Principal } from '../policy/index.js';
import type { TeamsService } from '../modules/teams/service.js';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
  }
  interface FastifyContextConfig {
    /** a route anyone may call (sign-in): the auth hook lets it through without a principal */
    public?: boolean;
  }
}

/**
 * The session cookie's name: `atrium_session` over plain HTTP, `__Host-atrium_session` over HTTPS,
 * where the prefix makes the browser refuse the cookie unless it is Secure, host-only and for
 * Path=/ — so no sibling subdomain and no plain-HTTP page can plant one beside it.
 */
export const SESSION_COOKIE = 'atrium_session';
const HOST_SESSION_COOKIE = `__Host-${SESSION_COOKIE}`;

const UNSAFE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * The session cookie of a request: its token, null when there is none, or `ambiguous` when the
 * request carries two different ones (a planted cookie beside the real one: neither is believed).
 */
export function readSessionCookie(request: FastifyRequest, publicUrl: string | null): string | null | 'ambiguous' {
  const header = request.headers.cookie;
  if (!header) return null;
  const name = cookieName(request, publicUrl);
  let found: string | null = null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0 || part.slice(0, eq).trim() !== name) continue;
    const value = part.slice(eq + 1).trim();
    if (found !== null && value !== found) return 'ambiguous';
    found = value;
  }
  // A value of another shape is no session of ours, but it was sent: the caller is told to sign in again.
  return found === null ? null : /^[A-Za-z0-9_-]{16,128}$/.test(found) ? found : 'ambiguous';
}

/**
 * Whether the browser reached us over HTTPS: the connection itself, `X-Forwarded-Proto` when
 * `TRUST_PROXY` says the proxy in front is believed (Fastify's `request.protocol`), or a
 * `PUBLIC_URL` that is https (a TLS-terminating proxy we were not told to trust).
 */
function overHttps(request: FastifyRequest, publicUrl: string | null): boolean {
  return request.protocol === 'https' || (publicUrl?.startsWith('https://') ?? false);
}

const cookieName = (request: FastifyRequest, publicUrl: string | null) => (overHttps(request, publicUrl) ? HOST_SESSION_COOKIE : SESSION_COOKIE);

/** `Set-Cookie` for a session token expiring at `expires`; null token: the cookie is removed. */
export function sessionCookie(request: FastifyRequest, publicUrl: string | null, token: string | null, expires: Date | null): string {
  const maxAge = token && expires ? Math.max(0, Math.round((expires.getTime() - Date.now()) / 1000)) : 0;
  const parts = [`${cookieName(request, publicUrl)}=${token ?? ''}`, 'Path=/', 'HttpOnly', 'SameSite=Lax', `Max-Age=${maxAge}`];
  if (overHttps(request, publicUrl)) parts.push('Secure');
  return parts.join('; ');
}

/**
 * The cookie that ties an OpenID Connect callback to the browser that started the sign-in (so a
 * callback URL sent to someone else signs nobody in): only under the sign-in's own path, ten
 * minutes at most. `__Secure-` over HTTPS (`__Host-` needs Path=/).
 */
const OIDC_COOKIE = 'atrium_oidc';
const OIDC_COOKIE_PATH = '/api/v1/auth/oidc';
const oidcCookieName = (request: FastifyRequest, publicUrl: string | null) => (overHttps(request, publicUrl) ? `__Secure-${OIDC_COOKIE}` : OIDC_COOKIE);

/** `Set-Cookie` of the sign-in's browser token; null removes it. */
export function oidcBrowserCookie(request: FastifyRequest, publicUrl: string | null, token: string | null, maxAgeSeconds: number): string {
  const parts = [
    `${oidcCookieName(request, publicUrl)}=${token ?? ''}`,
    `Path=${OIDC_COOKIE_PATH}`,
    'HttpOnly',
    'SameSite=Lax',
    `Max-Age=${token ? maxAgeSeconds : 0}`,
  ];
  if (overHttps(request, publicUrl)) parts.push('Secure');
  return parts.join('; ');
}

/** The sign-in's browser token, or null when absent or not of our shape. */
export function readOidcBrowserCookie(request: FastifyRequest, publicUrl: string | null): string | null {
  const name = oidcCookieName(request, publicUrl);
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0 || part.slice(0, eq).trim() !== name) continue;
    const value = part.slice(eq + 1).trim();
    return /^[A-Za-z0-9_-]{16,128}$/.test(value) ? value : null;
  }
  return null;
}

/** The origin people use to reach this server: `PUBLIC_URL`, else the request's own scheme and Host. */
export function publicOrigin(request: FastifyRequest, publicUrl: string | null): string {
  return publicUrl ?? `${request.protocol}://${request.host}`;
}

/** The web app's page where an invited user sets their password. The token is in the fragment: never sent to a server, a log or a Referer. */
export function inviteUrl(origin: string, token: string): string {
  return `${origin}/invite#token=${token}`;
}

/** `host[:port]` of a URL, lower-case, a default port dropped (`http://a:80` → `a`). */
const hostOf = (origin: string): string | null => {
  try {
    return new URL(origin).host.toLowerCase();
  } catch {
    return null;
  }
};

/**
 * CSRF defence for requests a browser sends with the cookie on its own: the change must come
 * from this server's pages — `Sec-Fetch-Site: same-origin`, or an `Origin` whose host is the
 * request's Host (or `PUBLIC_URL`'s). Hosts, not schemes, are compared, so a TLS-terminating
 * proxy that forwards plain HTTP still matches; a page on another host never does.
 */
export function requireSameOrigin(request: FastifyRequest, publicUrl: string | null): void {
  if (request.headers['sec-fetch-site'] === 'same-origin') return;
  const origin = request.headers.origin;
  const host = origin ? hostOf(origin) : null;
  if (host && (host === hostOf(`http://${request.host}`) || (publicUrl !== null && host === hostOf(publicUrl)))) return;
  throw new AppError(
    'forbidden',
    'csrf',
    "A change made with the session cookie must come from this server's own pages (Origin or Sec-Fetch-Site: same-origin); programs use an API key",
  );
}

/**
 * Sign-in routes take no cookie, yet a page elsewhere could still sign a visitor into the
 * attacker's account (login CSRF): a foreign `Origin`, when one is sent, is refused.
 */
export function refuseForeignOrigin(request: FastifyRequest, publicUrl: string | null): void {
  if (request.headers.origin !== undefined || request.headers['sec-fetch-site'] !== undefined) requireSameOrigin(request, publicUrl);
}

/**
 * Sets request.principal from `Authorization: Bearer <api key>` or, without one, the session
 * cookie (Bearer wins when both are sent). 401 when neither authenticates — a cookie that is no
 * live session is a 401 before anything else is checked. With a session, unsafe methods must
 * then pass requireSameOrigin (403 `csrf`). A session whose expiry slid forward gets its cookie
 * sent again with the new Max-Age.
 */
export function authenticate(teams: TeamsService, auth: AuthService, publicUrl: string | null) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    if (request.routeOptions.config?.public) return;
    const header = request.headers.authorization;
    const bearer = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    if (bearer?.[1]) {
      const principal = await teams.authenticate(bearer[1]);
      if (!principal) throw new AppError('unauthorized', 'invalid_api_key', 'The API key is unknown or revoked');
      request.principal = { ...principal, ip: request.ip };
      return;
    }
    const token = readSessionCookie(request, publicUrl);
    if (!token) {
      if (header) throw new AppError('unauthorized', 'invalid_api_key', 'Send an API key as Authorization: Bearer <key>');
      throw new AppError('unauthorized', 'missing_api_key', 'Send an API key as Authorization: Bearer <key>, or sign in');
    }
    const session = token === 'ambiguous' ? null : await auth.findSession(token);
    if (!session) {
      reply.header('set-cookie', sessionCookie(request, publicUrl, null, null));
      throw new AppError('unauthorized', 'session_ended', 'The session has ended or was revoked; sign in again');
    }
    if (UNSAFE_METHODS.has(request.method)) requireSameOrigin(request, publicUrl);
    const extendedTo = await auth.slideSession(session);
    if (extendedTo === null) {
      reply.header('set-cookie', sessionCookie(request, publicUrl, null, null));
      throw new AppError('unauthorized', 'session_ended', 'The session has ended or was revoked; sign in again');
    }
    if (extendedTo !== session.expires) reply.header('set-cookie', sessionCookie(request, publicUrl, token as string, extendedTo));
    request.principal = { ...session.principal, ip: request.ip };
  };
}

/** The caller of an authenticated route (the hook guarantees it is set). */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new AppError('unauthorized', 'missing_api_key', 'Authentication required');
  return request.principal;
}
