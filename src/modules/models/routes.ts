import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { principalOf } from '../../http/auth.js';
import { acceptWrapped } from '../../http/bodies.js';
import { bodyErrorResponses, errorResponses, problems, Uuid } from '../../http/schemas.js';
import {
  ConnectionTest,
  CONNECTION_TEST_PROMPT,
  ConnectionTestBody,
  CreateModelQuery,
  ModelIds,
  ModelListQuery,
  ModelRef,
  ModelRequest,
  NewModelRequest,
  type ModelT,
} from './schema.js';
import type { ModelsService } from './service.js';

/** Configuration warnings (e.g. a contextWindow larger than the provider serves) also go to the log. */
function logWarnings(req: FastifyRequest, m: ModelT): ModelT {
  if (m.warnings?.length) req.log.warn({ modelId: m.id, warnings: m.warnings }, 'model configuration warning');
  return m;
}

export const modelRoutes: FastifyPluginAsyncTypebox<{ models: ModelsService }> = async (app, { models }) => {
  const tags = ['models'];
  const one = { 200: Type.Ref('Model'), ...errorResponses };
  const oneFromBody = { 200: Type.Ref('Model'), ...bodyErrorResponses };
  const manyFromBody = { 200: Type.Array(Type.Ref('Model')), ...bodyErrorResponses };
  const many = { 200: Type.Array(Type.Ref('Model')), ...errorResponses };
  const wrappedRequest = acceptWrapped('modelRequest');

  app.get(
    '/models',
    { schema: { tags, operationId: 'listModels', summary: 'Get Models (active)', querystring: ModelListQuery, response: many } },
    async (req) => models.list(principalOf(req), req.query, true),
  );
  app.get(
    '/models/all',
    { schema: { tags, operationId: 'listAllModels', summary: 'Get All Models (active and inactive)', querystring: ModelListQuery, response: many } },
    async (req) => models.list(principalOf(req), req.query, false),
  );
  app.post(
    '/models',
    {
      preValidation: wrappedRequest,
      schema: {
        tags,
        operationId: 'createModel',
        summary: 'Save New Model (body bare or as {modelRequest})',
        querystring: CreateModelQuery,
        body: NewModelRequest,
        response: { ...oneFromBody, ...problems(409) },
      },
    },
    async (req) => logWarnings(req, await models.create(principalOf(req), req.body, { system: req.query.system })),
  );
  app.get(
    '/models/:modelId',
    { schema: { tags, operationId: 'getModel', summary: 'Get Model', params: Type.Object({ modelId: Uuid }), response: one } },
    async (req) => models.get(principalOf(req), req.params.modelId),
  );
  app.patch(
    '/models/:modelId',
    {
      preValidation: wrappedRequest,
      schema: {
        tags,
        operationId: 'updateModel',
        summary: 'Save Model (update; body bare or as {modelRequest})',
        params: Type.Object({ modelId: Uuid }),
        body: ModelRequest,
        response: oneFromBody,
      },
    },
    async (req) => logWarnings(req, await models.update(principalOf(req), req.params.modelId, req.body)),
  );
  app.post(
    '/models/add-to-team',
    { preValidation: acceptWrapped('model'), schema: { tags, operationId: 'addModelToTeam', summary: 'Add To Team', body: ModelRef, response: oneFromBody } },
    async (req) => models.addToTeam(principalOf(req), req.body.id),
  );
  app.post(
    '/models/remove-from-team',
    {
      preValidation: acceptWrapped('model'),
      schema: { tags, operationId: 'removeModelFromTeam', summary: 'Remove From Team', body: ModelRef, response: oneFromBody },
    },
    async (req) => models.removeFromTeam(principalOf(req), req.body.id),
  );
  app.post(
    '/models/list',
    {
      preValidation: acceptWrapped('modelIds'),
      schema: { tags, operationId: 'listModelsByIds', summary: 'Get Active Models From List', body: ModelIds, response: manyFromBody },
    },
    async (req) => models.listByIds(principalOf(req), req.body, true),
  );
  app.post(
    '/models/list/all',
    {
      preValidation: acceptWrapped('modelIds'),
      schema: { tags, operationId: 'listAllModelsByIds', summary: 'Get All Models From List (active and inactive)', body: ModelIds, response: manyFromBody },
    },
    async (req) => models.listByIds(principalOf(req), req.body, false),
  );
  app.post(
    '/models/:modelId/test',
    {
      schema: {
        tags,
        operationId: 'testModelConnection',
        summary: "Test a model's connection with a one-line prompt (team owner/admin; provider failures are the answer, not an error)",
        params: Type.Object({ modelId: Uuid }),
        body: ConnectionTestBody,
        response: { 200: ConnectionTest, ...bodyErrorResponses },
      },
    },
    async (req) => models.testConnection(principalOf(req), req.params.modelId, req.body.prompt ?? CONNECTION_TEST_PROMPT),
  );
};
