import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { inviteUrl, principalOf, publicOrigin } from '../../http/auth.js';
import { bodyErrorResponses, errorResponses, INT32_MAX, problems, Uuid } from '../../http/schemas.js';
import { ChangeRoleBody, CreateKeyBody, CreateTeamAnswer, CreateTeamBody, CreateUserAnswer, CreateUserBody, Me } from './schema.js';
import type { TeamsService } from './service.js';

export const teamRoutes: FastifyPluginAsyncTypebox<{ teams: TeamsService; publicUrl: string | null }> = async (app, { teams, publicUrl }) => {
  const tags = ['teams'];

  app.get('/me', { schema: { tags, operationId: 'getMe', summary: 'The caller and their team', response: { 200: Me, ...errorResponses } } }, async (req) => {
    const p = principalOf(req);
    return {
      user: { id: p.userId, name: p.name, email: p.email, role: p.role, instanceAdmin: p.instanceAdmin },
      team: { id: p.teamId, name: p.teamName },
    };
  });

  app.post(
    '/teams',
    {
      schema: {
        tags,
        operationId: 'createTeam',
        summary: 'Create a team with its owner (instance admin)',
        body: CreateTeamBody,
        response: { 201: CreateTeamAnswer, ...bodyErrorResponses, ...problems(409) },
      },
    },
    async (req, reply) => {
      const { inviteToken, ...made } = await teams.createTeam(principalOf(req), req.body);
      return reply.code(201).send({ ...made, inviteUrl: inviteUrl(publicOrigin(req, publicUrl), inviteToken) });
    },
  );

  app.post(
    '/users',
    {
      schema: {
        tags,
        operationId: 'createUser',
        summary: 'Add a user to the team; their API key (and invite link) are shown once',
        body: CreateUserBody,
        response: { 201: CreateUserAnswer, ...bodyErrorResponses, ...problems(409) },
      },
    },
    async (req, reply) => {
      const { inviteToken, ...made } = await teams.createUser(principalOf(req), { ...req.body, role: req.body.role ?? 'member' });
      return reply.code(201).send({ ...made, inviteUrl: inviteToken ? inviteUrl(publicOrigin(req, publicUrl), inviteToken) : null });
    },
  );

  app.get(
    '/users',
    { schema: { tags, operationId: 'listUsers', summary: 'Users of the team', response: { 200: Type.Array(Type.Ref('User')), ...errorResponses } } },
    async (req) => teams.listUsers(principalOf(req)),
  );

  app.delete(
    '/users/:userId',
    {
      schema: {
        tags,
        operationId: 'deleteUser',
        summary: 'Remove a user from the team',
        params: Type.Object({ userId: Type.Integer({ minimum: 1, maximum: INT32_MAX }) }),
        response: { 204: { description: 'Deleted', type: 'null' }, ...errorResponses },
      },
    },
    async (req, reply) => {
      await teams.deleteUser(principalOf(req), req.params.userId);
      return reply.code(204).send(null);
    },
  );

  app.patch(
    '/users/:userId',
    {
      schema: {
        tags,
        operationId: 'changeUserRole',
        summary: "Change a user's role (team owner/admin; only an owner grants or removes owner)",
        params: Type.Object({ userId: Type.Integer({ minimum: 1, maximum: INT32_MAX }) }),
        body: ChangeRoleBody,
        response: { 200: Type.Ref('User'), ...bodyErrorResponses, ...problems(409) },
      },
    },
    async (req) => teams.changeRole(principalOf(req), req.params.userId, req.body.role),
  );

  app.post(
    '/api-keys',
    {
      schema: {
        tags,
        operationId: 'createApiKey',
        summary: 'Create an API key for the caller; the key is shown once',
        body: CreateKeyBody,
        response: { 201: Type.Ref('CreatedApiKey'), ...bodyErrorResponses },
      },
    },
    async (req, reply) => reply.code(201).send(await teams.createKey(principalOf(req), req.body.name)),
  );

  app.get(
    '/api-keys',
    {
      schema: {
        tags,
        operationId: 'listApiKeys',
        summary: "The caller's API keys (without the keys)",
        response: { 200: Type.Array(Type.Ref('ApiKey')), ...errorResponses },
      },
    },
    async (req) => teams.listKeys(principalOf(req)),
  );

  app.delete(
    '/api-keys/:id',
    {
      schema: {
        tags,
        operationId: 'revokeApiKey',
        summary: "Revoke one of the caller's API keys",
        params: Type.Object({ id: Uuid }),
        response: { 204: { description: 'Revoked', type: 'null' }, ...errorResponses },
      },
    },
    async (req, reply) => {
      await teams.revokeKey(principalOf(req), req.params.id);
      return reply.code(204).send(null);
    },
  );
};
