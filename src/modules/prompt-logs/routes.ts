import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { principalOf } from '../../http/auth.js';
import { PageOf } from '../../http/paging.js';
import { errorResponses } from '../../http/schemas.js';
import { PromptLogPagedQuery, PromptLogRangeQuery } from './schema.js';
import type { PromptLogsService } from './service.js';

export const promptLogRoutes: FastifyPluginAsyncTypebox<{ logs: PromptLogsService }> = async (app, { logs }) => {
  const tags = ['chat'];

  app.get(
    '/chat/prompt-logs',
    {
      schema: {
        tags,
        operationId: 'listPromptLogs',
        summary: 'Retrieve prompt logs in a date range',
        querystring: PromptLogRangeQuery,
        response: { 200: Type.Array(Type.Ref('PromptLog')), ...errorResponses },
      },
    },
    async (req) => logs.range(principalOf(req), req.query),
  );
  app.get(
    '/chat/prompt-logs/paged',
    {
      schema: {
        tags,
        operationId: 'listPromptLogsPaged',
        summary: 'Retrieve paged prompt logs',
        querystring: PromptLogPagedQuery,
        response: { 200: PageOf(Type.Ref('PromptLog')), ...errorResponses },
      },
    },
    async (req) => logs.paged(principalOf(req), req.query),
  );
  app.get(
    '/chat/prompt-logs/csv',
    {
      schema: {
        tags,
        operationId: 'exportPromptLogsCsv',
        summary: 'Retrieve prompt logs as CSV (streamed)',
        querystring: PromptLogRangeQuery,
        response: { 200: { description: 'CSV with a header row', content: { 'text/csv': { schema: Type.String() } } }, ...errorResponses },
      },
    },
    async (req, reply) => {
      const stream = await logs.csv(principalOf(req), req.query);
      return reply.type('text/csv; charset=utf-8').header('content-disposition', 'attachment; filename="prompt-logs.csv"').send(stream);
    },
  );
};
