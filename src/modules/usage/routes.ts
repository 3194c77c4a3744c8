import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { principalOf } from '../../http/auth.js';
import { bodyErrorResponses, errorResponses, problems, Uuid } from '../../http/schemas.js';
import { CreateBudgetBody, MeUsage, UpdateBudgetBody, UsageQuery } from './schema.js';
import type { UsageService } from './service.js';

export const usageRoutes: FastifyPluginAsyncTypebox<{ usage: UsageService }> = async (app, { usage }) => {
  const tags = ['usage'];

  app.post(
    '/budgets',
    {
      schema: {
        tags,
        operationId: 'createBudget',
        summary: 'Set a budget and/or rate limit on the team, a user or an API key (owner/admin)',
        body: CreateBudgetBody,
        response: { 201: Type.Ref('Budget'), ...bodyErrorResponses, ...problems(409) },
      },
    },
    async (req, reply) => reply.code(201).send(await usage.createBudget(principalOf(req), req.body)),
  );

  app.get(
    '/budgets',
    {
      schema: {
        tags,
        operationId: 'listBudgets',
        summary: 'Budgets of the team (a member: those that apply to them)',
        response: { 200: Type.Array(Type.Ref('Budget')), ...errorResponses },
      },
    },
    async (req) => usage.listBudgets(principalOf(req)),
  );

  app.patch(
    '/budgets/:id',
    {
      schema: {
        tags,
        operationId: 'updateBudget',
        summary: "Change a budget's credit and/or rate limit (owner/admin)",
        params: Type.Object({ id: Uuid }),
        body: UpdateBudgetBody,
        response: { 200: Type.Ref('Budget'), ...bodyErrorResponses },
      },
    },
    async (req) => usage.updateBudget(principalOf(req), req.params.id, req.body),
  );

  app.delete(
    '/budgets/:id',
    {
      schema: {
        tags,
        operationId: 'deleteBudget',
        summary: 'Remove a budget (owner/admin)',
        params: Type.Object({ id: Uuid }),
        response: { 204: { description: 'Deleted', type: 'null' }, ...errorResponses },
      },
    },
    async (req, reply) => {
      await usage.deleteBudget(principalOf(req), req.params.id);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/usage',
    {
      schema: {
        tags,
        operationId: 'getUsage',
        summary: 'Usage grouped by day, user, model, workspace or API key (a member: their own)',
        querystring: UsageQuery,
        response: { 200: Type.Array(Type.Ref('UsageRow')), ...errorResponses },
      },
    },
    async (req) => usage.report(principalOf(req), req.query),
  );

  app.get(
    '/usage/csv',
    {
      schema: {
        tags,
        operationId: 'exportUsageCsv',
        summary: 'The usage report as CSV',
        querystring: UsageQuery,
        response: { 200: { description: 'CSV with a header row', content: { 'text/csv': { schema: Type.String() } } }, ...errorResponses },
      },
    },
    async (req, reply) => {
      const stream = await usage.csv(principalOf(req), req.query);
      return reply.type('text/csv; charset=utf-8').header('content-disposition', 'attachment; filename="usage.csv"').send(stream);
    },
  );

  app.get(
    '/me/usage',
    {
      schema: {
        tags,
        operationId: 'getMyUsage',
        summary: "The caller's spend and what is left under each budget that applies to them",
        response: { 200: MeUsage, ...errorResponses },
      },
    },
    async (req) => usage.me(principalOf(req)),
  );
};
