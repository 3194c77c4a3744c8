import { randomUUID } from 'node:crypto';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { principalOf } from '../../http/auth.js';
import { acceptWrapped } from '../../http/bodies.js';
import { bodyErrorResponses, DeleteResponse, errorResponses, problems, Uuid } from '../../http/schemas.js';
import { AddWorkspaceBody, PatchWorkspaceBody, WorkspaceModelSettings } from './schema.js';
import type { WorkspacesService } from './service.js';

export const workspaceRoutes: FastifyPluginAsyncTypebox<{ workspaces: WorkspacesService }> = async (app, { workspaces: ws }) => {
  const tags = ['workspaces'];
  const one = { 200: Type.Ref('Workspace'), ...errorResponses };
  const oneFromBody = { 200: Type.Ref('Workspace'), ...bodyErrorResponses, ...problems(409) };
  const WsParams = Type.Object({ workspaceId: Uuid });

  app.get(
    '/workspaces',
    { schema: { tags, operationId: 'listWorkspaces', summary: 'Get Workspaces', response: { 200: Type.Array(Type.Ref('Workspace')), ...errorResponses } } },
    async (req) => ws.list(principalOf(req)),
  );
  app.post(
    '/workspaces',
    { schema: { tags, operationId: 'createWorkspace', summary: 'Add Workspace (without ID)', body: AddWorkspaceBody, response: oneFromBody } },
    async (req) => ws.create(principalOf(req), randomUUID(), req.body),
  );
  app.get(
    '/workspaces/:workspaceId',
    { schema: { tags, operationId: 'getWorkspace', summary: 'Get Workspace', params: WsParams, response: one } },
    async (req) => ws.get(principalOf(req), req.params.workspaceId),
  );
  app.post(
    '/workspaces/:workspaceId',
    {
      schema: {
        tags,
        operationId: 'createWorkspaceWithId',
        summary: 'Add Workspace (with the given ID)',
        params: WsParams,
        body: AddWorkspaceBody,
        response: oneFromBody,
      },
    },
    async (req) => ws.create(principalOf(req), req.params.workspaceId, req.body),
  );
  app.patch(
    '/workspaces/:workspaceId',
    {
      schema: {
        tags,
        operationId: 'updateWorkspace',
        summary: 'Update Workspace (rename, settings, models)',
        params: WsParams,
        body: PatchWorkspaceBody,
        response: oneFromBody,
      },
    },
    async (req) => ws.update(principalOf(req), req.params.workspaceId, req.body),
  );
  app.delete(
    '/workspaces/:workspaceId',
    { schema: { tags, operationId: 'deleteWorkspace', summary: 'Delete Workspace', params: WsParams, response: { 200: DeleteResponse, ...errorResponses } } },
    async (req) => {
      await ws.delete(principalOf(req), req.params.workspaceId);
      return { deleted: true };
    },
  );
  app.post(
    '/workspaces/:workspaceId/:modelId',
    {
      preValidation: acceptWrapped('workspaceModel'),
      schema: {
        tags,
        operationId: 'updateWorkspaceModel',
        summary: 'Update Workspace Model (body bare or as {workspaceModel})',
        params: Type.Object({ workspaceId: Uuid, modelId: Uuid }),
        body: WorkspaceModelSettings,
        response: { 200: Type.Ref('WorkspaceModel'), ...bodyErrorResponses },
      },
    },
    async (req) => ws.updateModel(principalOf(req), req.params.workspaceId, req.params.modelId, req.body ?? {}),
  );
};
