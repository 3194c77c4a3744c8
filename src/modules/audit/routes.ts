import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { principalOf } from '../../http/auth.js';
import { PageOf } from '../../http/paging.js';
import { errorResponses } from '../../http/schemas.js';
import { AuditCsvQuery, AuditQuery } from './schema.js';
import type { AuditService } from './service.js';

export const auditRoutes: FastifyPluginAsyncTypebox<{ audit: AuditService }> = async (app, { audit }) => {
  const tags = ['audit'];

  app.get(
    '/audit',
    {
      schema: {
        tags,
        operationId: 'listAudit',
        summary: 'The audit log, newest first (team owner/admin: their team; instance admin: every team)',
        querystring: AuditQuery,
        response: { 200: PageOf(Type.Ref('AuditEntry')), ...errorResponses },
      },
    },
    async (req) => audit.page(principalOf(req), req.query),
  );

  app.get(
    '/audit/csv',
    {
      schema: {
        tags,
        operationId: 'exportAuditCsv',
        summary: 'The audit log as CSV (streamed), with the same filters',
        querystring: AuditCsvQuery,
        response: { 200: { description: 'CSV with a header row', content: { 'text/csv': { schema: Type.String() } } }, ...errorResponses },
      },
    },
    async (req, reply) => {
      const stream = await audit.csv(principalOf(req), req.query);
      return reply.type('text/csv; charset=utf-8').header('content-disposition', 'attachment; filename="audit.csv"').send(stream);
    },
  );
};
