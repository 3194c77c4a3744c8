import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { oidcBrowserCookie, publicOrigin, readOidcBrowserCookie, sessionCookie } from '../../http/auth.js';
import { AppError } from '../../errors.js';
import type { AuthService } from './auth-service.js';
import { OIDC_LOGIN_TTL_SECONDS, OidcSignInError, type OidcService } from './oidc-service.js';
import { problems } from '../../http/schemas.js';
import { AuthMethods } from './schema.js';

export const OIDC_LOGIN_PATH = '/api/v1/auth/oidc/login';
const CALLBACK_PATH = '/api/v1/auth/oidc/callback';

const oidcOff = () => new AppError('not_found', 'oidc_off', 'OpenID Connect sign-in is not configured on this server');

const redirect = (description: string) => ({
  description,
  type: 'null',
  headers: { location: Type.String({ description: 'Where the browser goes next' }) },
});

/**
 * OpenID Connect sign-in and the sign-in methods (docs/API.md, "Sign-in with an identity
 * provider"). Both OIDC routes are browser navigations: a failure sends the browser back to the
 * sign-in page with `?signInError=<reason>` (words for it in the web app), never a JSON problem
 * nobody would read; the operator finds the details in the log.
 */
export const oidcRoutes: FastifyPluginAsyncTypebox<{ oidc: OidcService | null; auth: AuthService; publicUrl: string | null }> = async (
  app,
  { oidc, auth, publicUrl },
) => {
  const tags = ['auth'];
  const open = { public: true };

  app.get(
    '/auth/methods',
    {
      config: open,
      schema: {
        tags,
        operationId: 'authMethods',
        summary: 'How people sign in here (for the sign-in page)',
        security: [],
        response: { 200: AuthMethods, ...problems(400) },
      },
    },
    async () => ({ password: auth.passwordLogin, oidc: oidc ? { name: oidc.config.name, loginUrl: OIDC_LOGIN_PATH } : null }),
  );

  const failed = (err: unknown, req: { log: { warn: (o: object, m: string) => void } }): string => {
    if (!(err instanceof OidcSignInError)) throw err;
    const cause = err.cause as { message?: string; code?: string } | undefined;
    req.log.warn({ reason: err.reason, cause: cause?.message, causeCode: cause?.code }, `OpenID Connect sign-in failed: ${err.message}`);
    return `/?signInError=${err.reason}`;
  };

  app.get(
    '/auth/oidc/login',
    {
      config: open,
      schema: {
        tags,
        operationId: 'oidcLogin',
        summary: "Start signing in with the organisation's identity provider (redirects to it)",
        security: [],
        response: {
          302: redirect("To the provider's sign-in, or back to the sign-in page with ?signInError when it cannot be reached"),
          ...problems(404),
        },
      },
    },
    async (req, reply) => {
      if (!oidc) throw oidcOff();
      try {
        const started = await oidc.begin(`${publicOrigin(req, publicUrl)}${CALLBACK_PATH}`);
        reply.header('set-cookie', oidcBrowserCookie(req, publicUrl, started.browserToken, OIDC_LOGIN_TTL_SECONDS));
        return reply.code(302).header('cache-control', 'no-store').redirect(started.url, 302);
      } catch (err) {
        return reply.redirect(failed(err, req), 302);
      }
    },
  );

  app.get(
    '/auth/oidc/callback',
    {
      config: open,
      schema: {
        tags,
        operationId: 'oidcCallback',
        summary: 'Where the identity provider sends the browser back: signs in (session cookie) and redirects to the app',
        security: [],
        response: {
          302: redirect('To `/` signed in (Set-Cookie: the session), or to `/?signInError=<reason>` with no session'),
          ...problems(404),
        },
      },
    },
    async (req, reply) => {
      if (!oidc) throw oidcOff();
      const query = new URLSearchParams(req.url.includes('?') ? req.url.slice(req.url.indexOf('?') + 1) : '');
      const clearBrowser = oidcBrowserCookie(req, publicUrl, null, 0);
      reply.header('cache-control', 'no-store');
      try {
        const signed = await oidc.finish(query, readOidcBrowserCookie(req, publicUrl), req.ip);
        reply.header('set-cookie', [clearBrowser, sessionCookie(req, publicUrl, signed.token, signed.expires)]);
        return reply.redirect('/', 302);
      } catch (err) {
        reply.header('set-cookie', clearBrowser);
        const to = failed(err, req);
        // A refused provider sign-in is an `auth.login_failed` of no known user (the reason only).
        if (err instanceof OidcSignInError) await auth.recordFailedSignIn({ method: 'oidc', ip: req.ip }, { userId: null, reason: err.reason });
        return reply.redirect(to, 302);
      }
    },
  );
};
