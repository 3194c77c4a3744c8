import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { principalOf } from '../../http/auth.js';
import { errorResponses, Uuid } from '../../http/schemas.js';
import { CreateKeyBody, CreateTeamAnswer, CreateTeamBody, CreateUserAnswer, CreateUserBody, Me } from './schema.js';
import type { TeamsService } from './service.js';

export const teamRoutes: FastifyPluginAsyncTypebox<{ teams: TeamsService }> = async (app, { teams }) => {
  const tags = ['teams'];

  app.get('/me', { schema: { tags, response: { 200: Me, ...errorResponses } } }, async (req) => {
    const p = principalOf(req);
    return {
      user: { id: p.userId, name: p.name, email: p.email, role: p.role, instanceAdmin: p.instanceAdmin },
      team: { id: p.teamId, name: p.teamName },
    };
  });

  app.post(
    '/teams',
    { schema: { tags, body: CreateTeamBody, response: { 201: CreateTeamAnswer, ...errorResponses } } },
    async (req, reply) => reply.code(201).send(await teams.createTeam(principalOf(req), req.body)),
  );

  app.post(
    '/users',
    { schema: { tags, body: CreateUserBody, response: { 201: CreateUserAnswer, ...errorResponses } } },
    async (req, reply) =>
      reply.code(201).send(await teams.createUser(principalOf(req), { ...req.body, role: req.body.role ?? 'member' })),
  );

  app.get('/users', { schema: { tags, response: { 200: Type.Array(Type.Ref('User')), ...errorResponses } } }, async (req) =>
    teams.listUsers(principalOf(req)),
  );

  app.delete(
    '/users/:userId',
    { schema: { tags, params: Type.Object({ userId: Type.Integer({ minimum: 1 }) }), response: { 204: Type.Null(), ...errorResponses } } },
    async (req, reply) => {
      await teams.deleteUser(principalOf(req), req.params.userId);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/api-keys',
    { schema: { tags, body: CreateKeyBody, response: { 201: Type.Ref('ApiKey'), ...errorResponses } } },
    async (req, reply) => reply.code(201).send(await teams.createKey(principalOf(req), req.body.name)),
  );

  app.get('/api-keys', { schema: { tags, response: { 200: Type.Array(Type.Ref('ApiKey')), ...errorResponses } } }, async (req) =>
    teams.listKeys(principalOf(req)),
  );

  app.delete(
    '/api-keys/:id',
    { schema: { tags, params: Type.Object({ id: Uuid }), response: { 204: Type.Null(), ...errorResponses } } },
    async (req, reply) => {
      await teams.revokeKey(principalOf(req), req.params.id);
      return reply.code(204).send(null);
    },
  );
};
