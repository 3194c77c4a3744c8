import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf, readSessionCookie, refuseForeignOrigin, requireSameOrigin, sessionCookie } from '../../http/auth.js';
import { problems } from '../../http/schemas.js';
import type { AuthService } from './auth-service.js';
import { AcceptInviteBody, ChangePasswordBody, CheckInviteBody, InviteInfo, LoginBody, Me } from './schema.js';
import type { Principal } from '../../policy/index.js';

const meOf = (p: Principal) => ({
  user: { id: p.userId, name: p.name, email: p.email, role: p.role, instanceAdmin: p.instanceAdmin },
  team: { id: p.teamId, name: p.teamName },
});

/** Sign-in, sign-out, invites and password change (docs/API.md, "Sign-in and sessions"). */
export const authRoutes: FastifyPluginAsyncTypebox<{ auth: AuthService; publicUrl: string | null }> = async (app, { auth, publicUrl }) => {
  const tags = ['auth'];
  const open = { public: true };

  app.post(
    '/auth/login',
    {
      config: open,
      schema: {
        tags,
        operationId: 'login',
        summary: 'Sign in with email and password; sets the session cookie',
        security: [],
        body: LoginBody,
        response: { 200: Me, ...problems(400, 401, 403, 413, 415, 429) },
      },
    },
    async (req, reply) => {
      refuseForeignOrigin(req, publicUrl);
      const signed = await auth.login({ email: req.body.email, password: req.body.password, address: req.ip });
      reply.header('set-cookie', sessionCookie(req, publicUrl, signed.token, signed.expires));
      return meOf(signed.principal);
    },
  );

  app.post(
    '/auth/logout',
    {
      config: open,
      schema: {
        tags,
        operationId: 'logout',
        summary: 'End the session of the cookie sent (on every node) and remove the cookie',
        security: [],
        response: { 204: { description: 'Signed out', type: 'null' }, ...problems(400, 403) },
      },
    },
    async (req, reply) => {
      const token = readSessionCookie(req, publicUrl);
      if (token && token !== 'ambiguous') {
        requireSameOrigin(req, publicUrl);
        await auth.logout(token, req.ip);
      }
      return reply
        .code(204)
        .header('set-cookie', sessionCookie(req, publicUrl, null, null))
        .send(null);
    },
  );

  app.post(
    '/auth/check-invite',
    {
      config: open,
      schema: {
        tags,
        operationId: 'checkInvite',
        summary: 'Whom an invite token is for, before its password is set (nothing is changed)',
        security: [],
        body: CheckInviteBody,
        response: { 200: InviteInfo, ...problems(400, 403, 413, 415) },
      },
    },
    async (req) => auth.checkInvite(req.body.token),
  );

  app.post(
    '/auth/accept-invite',
    {
      config: open,
      schema: {
        tags,
        operationId: 'acceptInvite',
        summary: "Set one's first password with an invite token, and sign in",
        security: [],
        body: AcceptInviteBody,
        response: { 200: Me, ...problems(400, 403, 413, 415) },
      },
    },
    async (req, reply) => {
      refuseForeignOrigin(req, publicUrl);
      const signed = await auth.acceptInvite(req.body, req.ip);
      reply.header('set-cookie', sessionCookie(req, publicUrl, signed.token, signed.expires));
      return meOf(signed.principal);
    },
  );

  app.post(
    '/me/password',
    {
      schema: {
        tags,
        operationId: 'changePassword',
        summary: "Change the caller's password; their other sessions end",
        body: ChangePasswordBody,
        response: { 204: { description: 'Changed', type: 'null' }, ...problems(400, 401, 403, 404, 413, 415, 429) },
      },
    },
    async (req, reply) => {
      await auth.changePassword(principalOf(req), req.body);
      return reply.code(204).send(null);
    },
  );
};
