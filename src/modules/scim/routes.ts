import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { AppError } from '../../errors.js';
import { principalOf } from '../../http/auth.js';
import { toProblem } from '../../http/problem.js';
import { errorResponses } from '../../http/schemas.js';
import type { Actor } from '../audit/record.js';
import type { ScimService } from './service.js';

const SCIM_ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error';
const SCIM_TYPE = 'application/scim+json; charset=utf-8';

/** `POST /api/v1/scim/token`: the team owner's route that issues the team's SCIM token. */
export const scimTokenRoutes: FastifyPluginAsyncTypebox<{ scim: ScimService }> = async (app, { scim }) => {
  app.post(
    '/scim/token',
    {
      schema: {
        tags: ['teams'],
        operationId: 'createScimToken',
        summary: "Create the team's SCIM provisioning token (team owner); replaces the previous one; shown once",
        response: { 201: Type.Object({ token: Type.String(), created: Type.String({ format: 'date-time' }) }), ...errorResponses },
      },
    },
    async (req, reply) => reply.code(201).send(await scim.issueToken(principalOf(req))),
  );
};

declare module 'fastify' {
  interface FastifyRequest {
    scimTeam: string | null;
  }
}

type Body = Record<string, unknown>;

/**
 * `/scim/v2`: SCIM 2.0 for identity providers, outside the OpenAPI document (its own protocol,
 * schemas and error shape). Authenticated by the team's SCIM token (`Authorization: Bearer`),
 * never by an API key or a session.
 */
export async function scimRoutes(app: FastifyInstance, { scim }: { scim: ScimService }): Promise<void> {
  app.decorateRequest('scimTeam', null);
  app.addContentTypeParser(['application/scim+json', 'application/json'], { parseAs: 'string', bodyLimit: 1024 * 1024 }, (_req, body, done) => {
    try {
      const parsed = JSON.parse(body as string) as unknown;
      if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not an object');
      done(null, parsed);
    } catch {
      done(Object.assign(new AppError('bad_request', 'scim_invalid', 'The body is not a JSON object'), { scimType: 'invalidSyntax' }));
    }
  });
  app.setErrorHandler((err, request, reply) => {
    const { problem, isBug } = toProblem(err);
    if (isBug) request.log.error({ err }, 'unhandled error');
    const scimType = (err as { scimType?: string }).scimType;
    return reply
      .code(problem.status)
      .type(SCIM_TYPE)
      .send({ schemas: [SCIM_ERROR], status: String(problem.status), detail: problem.detail, ...(scimType ? { scimType } : {}) });
  });
  app.setNotFoundHandler((request, reply) =>
    reply
      .code(404)
      .type(SCIM_TYPE)
      .send({ schemas: [SCIM_ERROR], status: '404', detail: `No SCIM resource at ${request.url.split('?')[0]}` }),
  );
  app.addHook('onRequest', async (request) => {
    const bearer = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '');
    const team = bearer?.[1] ? await scim.teamOf(bearer[1]) : null;
    if (!team) throw new AppError('unauthorized', 'invalid_scim_token', "Send the team's SCIM token as Authorization: Bearer <token>");
    request.scimTeam = team;
  });
  app.addHook('onSend', async (_request, reply, payload) => {
    if (String(reply.getHeader('content-type') ?? '').startsWith('application/json')) reply.type(SCIM_TYPE);
    return payload;
  });

  const team = (req: FastifyRequest) => req.scimTeam!;
  const actor = (req: FastifyRequest): Actor => ({ teamId: team(req), userId: null, keyId: null, ip: req.ip });
  const hide = { schema: { hide: true } };
  const created = (reply: FastifyReply, body: Body) =>
    reply
      .code(201)
      .header('location', (body.meta as Body).location as string)
      .send(body);
  type Id = { Params: { id: string } };

  app.get<{ Querystring: { filter?: string; startIndex?: string; count?: string } }>('/Users', hide, async (req) => scim.listUsers(team(req), req.query));
  app.post<{ Body: Body }>('/Users', hide, async (req, reply) => created(reply, await scim.createUser(team(req), req.body ?? {}, actor(req))));
  app.get<Id>('/Users/:id', hide, async (req) => scim.getUser(team(req), req.params.id));
  app.put<Id & { Body: Body }>('/Users/:id', hide, async (req) => scim.replaceUser(team(req), req.params.id, req.body ?? {}, actor(req)));
  app.patch<Id & { Body: Body }>('/Users/:id', hide, async (req) => scim.patchUser(team(req), req.params.id, req.body ?? {}, actor(req)));
  app.delete<Id>('/Users/:id', hide, async (req, reply) => {
    await scim.deleteUser(team(req), req.params.id, actor(req));
    return reply.code(204).send();
  });
  app.get('/Groups', hide, async (req) => scim.listGroups(team(req)));
  app.get<Id>('/Groups/:id', hide, async (req) => scim.group(team(req), req.params.id));
  app.patch<Id & { Body: Body }>('/Groups/:id', hide, async (req) => scim.patchGroup(team(req), req.params.id, req.body ?? {}, actor(req)));
  app.get('/ServiceProviderConfig', hide, async () => ({
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig'],
    patch: { supported: true },
    bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
    filter: { supported: true, maxResults: 200 },
    changePassword: { supported: false },
    sort: { supported: false },
    etag: { supported: false },
    authenticationSchemes: [{ type: 'oauthbearertoken', name: 'Bearer token', description: "The team's SCIM token" }],
  }));
}
