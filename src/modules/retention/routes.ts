import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { principalOf } from '../../http/auth.js';
import { bodyErrorResponses, errorResponses, Uuid } from '../../http/schemas.js';
import { PatchTeamBody } from './schema.js';
import type { RetentionService } from './service.js';

export const retentionRoutes: FastifyPluginAsyncTypebox<{ retention: RetentionService }> = async (app, { retention }) => {
  const tags = ['teams'];
  const params = Type.Object({ teamId: Uuid });

  app.get(
    '/teams/:teamId',
    {
      schema: {
        tags,
        operationId: 'getTeam',
        summary: "The caller's team and its retention settings",
        params,
        response: { 200: Type.Ref('TeamSettings'), ...errorResponses },
      },
    },
    async (req) => retention.get(principalOf(req), req.params.teamId),
  );

  app.patch(
    '/teams/:teamId',
    {
      schema: {
        tags,
        operationId: 'updateTeam',
        summary: "Change the team's retention of threads and prompt logs (team owner)",
        params,
        body: PatchTeamBody,
        response: { 200: Type.Ref('TeamSettings'), ...bodyErrorResponses },
      },
    },
    async (req) => retention.update(principalOf(req), req.params.teamId, req.body),
  );
};
