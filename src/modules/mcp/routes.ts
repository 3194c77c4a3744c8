import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { principalOf } from '../../http/auth.js';
import { bodyErrorResponses, DeleteResponse, errorResponses, Uuid } from '../../http/schemas.js';
import { CreateMcpServerBody, PatchMcpServerBody } from './schema.js';
import type { McpService } from './service.js';

export const mcpRoutes: FastifyPluginAsyncTypebox<{ mcp: McpService }> = async (app, { mcp }) => {
  const tags = ['mcp-servers'];
  const Params = Type.Object({ serverId: Uuid });
  const one = { 200: Type.Ref('McpServer'), ...errorResponses };
  const oneFromBody = { 200: Type.Ref('McpServer'), ...bodyErrorResponses };

  app.get(
    '/mcp-servers',
    {
      schema: {
        tags,
        operationId: 'listMcpServers',
        summary: 'The team\u2019s MCP servers',
        response: { 200: Type.Array(Type.Ref('McpServer')), ...errorResponses },
      },
    },
    async (req) => mcp.list(principalOf(req)),
  );
  app.post(
    '/mcp-servers',
    { schema: { tags, operationId: 'createMcpServer', summary: 'Add an MCP server (team owner/admin)', body: CreateMcpServerBody, response: oneFromBody } },
    async (req) => mcp.create(principalOf(req), req.body),
  );
  app.get('/mcp-servers/:serverId', { schema: { tags, operationId: 'getMcpServer', summary: 'One MCP server', params: Params, response: one } }, async (req) =>
    mcp.get(principalOf(req), req.params.serverId),
  );
  app.patch(
    '/mcp-servers/:serverId',
    {
      schema: {
        tags,
        operationId: 'updateMcpServer',
        summary: 'Change an MCP server (team owner/admin)',
        params: Params,
        body: PatchMcpServerBody,
        response: oneFromBody,
      },
    },
    async (req) => mcp.update(principalOf(req), req.params.serverId, req.body),
  );
  app.delete(
    '/mcp-servers/:serverId',
    {
      schema: {
        tags,
        operationId: 'deleteMcpServer',
        summary: 'Delete an MCP server (team owner/admin)',
        params: Params,
        response: { 200: DeleteResponse, ...errorResponses },
      },
    },
    async (req) => {
      await mcp.delete(principalOf(req), req.params.serverId);
      return { deleted: true };
    },
  );
  app.post(
    '/mcp-servers/:serverId/test',
    {
      schema: {
        tags,
        operationId: 'testMcpServer',
        summary: 'Connect to an MCP server and list its tools (team owner/admin)',
        params: Params,
        response: { 200: Type.Ref('McpServerTest'), ...errorResponses },
      },
    },
    async (req) => mcp.test(principalOf(req), req.params.serverId),
  );
};
