import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { principalOf } from '../../http/auth.js';
import { bodyErrorResponses, DeleteResponse, errorResponses, Uuid } from '../../http/schemas.js';
import { SavedPromptBody, SavedPromptPatch } from './schema.js';
import type { SavedPromptsService } from './saved-prompts.js';

/** The prompt library (saved-prompts.ts). */
export const savedPromptRoutes: FastifyPluginAsyncTypebox<{ prompts: SavedPromptsService }> = async (app, { prompts }) => {
  const tags = ['chat'];
  const Id = Type.Object({ promptId: Uuid });
  app.get(
    '/prompts',
    {
      schema: {
        tags,
        operationId: 'listSavedPrompts',
        summary: "The team's prompts and the caller's own (team ones first, by title)",
        response: { 200: Type.Array(Type.Ref('SavedPrompt')), ...errorResponses },
      },
    },
    async (req) => prompts.list(principalOf(req)),
  );
  app.post(
    '/prompts',
    {
      schema: {
        tags,
        operationId: 'createSavedPrompt',
        summary: 'Save a prompt: personal, or for the team (owner/admin)',
        body: SavedPromptBody,
        response: { 201: Type.Ref('SavedPrompt'), ...bodyErrorResponses },
      },
    },
    async (req, reply) => reply.code(201).send(await prompts.create(principalOf(req), req.body)),
  );
  app.patch(
    '/prompts/:promptId',
    {
      schema: {
        tags,
        operationId: 'updateSavedPrompt',
        summary: 'Change a prompt (its creator; a team prompt: owner/admin)',
        params: Id,
        body: SavedPromptPatch,
        response: { 200: Type.Ref('SavedPrompt'), ...bodyErrorResponses },
      },
    },
    async (req) => prompts.update(principalOf(req), req.params.promptId, req.body),
  );
  app.delete(
    '/prompts/:promptId',
    {
      schema: {
        tags,
        operationId: 'deleteSavedPrompt',
        summary: 'Delete a prompt (its creator; a team prompt: owner/admin)',
        params: Id,
        response: { 200: DeleteResponse, ...errorResponses },
      },
    },
    async (req) => {
      await prompts.delete(principalOf(req), req.params.promptId);
      return { deleted: true };
    },
  );
};
