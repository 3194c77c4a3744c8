import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { principalOf } from '../../http/auth.js';
import { attachmentHeader } from '../../http/download.js';
import { readMultipart, type MultipartLimits } from '../../http/multipart.js';
import { formValidator } from '../../http/validation.js';
import { bodyErrorResponses, DeleteResponse, errorResponses, problems, Uuid } from '../../http/schemas.js';
import { plusAnswer } from './answer.js';
import type { PlusService } from './service.js';
import { ContextForPromptBody, ContextForPromptResponse, FilesForm, PlusForm, PlusFormFields, PlusReading, ShowPublicQuery } from './schema.js';
import type { PlusFields } from './service.js';

const checkPlusForm = formValidator(PlusFormFields);

function plusFields(raw: Record<string, string>): PlusFields {
  const { id, ...rest } = raw;
  const fields = checkPlusForm(id ? raw : rest);
  return fields.id ? { ...fields, id: fields.id.toLowerCase() } : fields;
}

export const plusRoutes: FastifyPluginAsyncTypebox<{ plus: PlusService; limits: MultipartLimits }> = async (app, { plus, limits }) => {
  const tags = ['plus'];
  const one = { 200: Type.Ref('Plus'), ...errorResponses };
  const fromForm = { 200: Type.Ref('Plus'), ...bodyErrorResponses, ...problems(409) };
  const PlusParams = Type.Object({ plusId: Uuid });
  const FileParams = Type.Object({ fileId: Uuid });

  app.get(
    '/plus',
    {
      schema: {
        tags,
        operationId: 'listPlus',
        summary: 'List Plus summaries',
        querystring: ShowPublicQuery,
        response: { 200: Type.Array(Type.Ref('PlusSummary')), ...errorResponses },
      },
    },
    async (req) => plus.list(principalOf(req), req.query.showPublic),
  );

  app.post(
    '/plus',
    {
      schema: {
        tags,
        operationId: 'savePlus',
        summary: 'Create or update a Plus entry (multipart/form-data)',
        consumes: ['multipart/form-data'],
        body: PlusForm,
        response: fromForm,
      },
    },
    async (req, reply) => {
      const caller = principalOf(req);
      const { fields, files } = await readMultipart(req, limits);
      return plusAnswer(reply, await plus.save(caller, plusFields(fields), files));
    },
  );

  app.get('/plus/:plusId', { schema: { tags, operationId: 'getPlus', summary: 'Get a Plus entry', params: PlusParams, response: one } }, async (req, reply) =>
    plusAnswer(reply, await plus.get(principalOf(req), req.params.plusId)),
  );

  app.delete(
    '/plus/:plusId',
    { schema: { tags, operationId: 'deletePlus', summary: 'Delete a Plus entry', params: PlusParams, response: { 200: DeleteResponse, ...errorResponses } } },
    async (req) => {
      await plus.delete(principalOf(req), req.params.plusId);
      return { deleted: true };
    },
  );

  app.post(
    '/plus/:plusId/add-file',
    {
      schema: {
        tags,
        operationId: 'addPlusFiles',
        summary: 'Add files to an existing Plus entry',
        consumes: ['multipart/form-data'],
        params: PlusParams,
        body: FilesForm,
        response: fromForm,
      },
    },
    async (req, reply) => {
      const caller = principalOf(req);
      const { files } = await readMultipart(req, limits);
      return plusAnswer(reply, await plus.addFiles(caller, req.params.plusId, files));
    },
  );

  app.get(
    '/plus/:plusId/reading',
    {
      schema: {
        tags,
        operationId: 'getPlusReading',
        summary: 'Files of uploads to a Plus entry being read by OCR now, with their pages read',
        params: PlusParams,
        response: { 200: PlusReading, ...errorResponses },
      },
    },
    async (req) => plus.readingNow(principalOf(req), req.params.plusId),
  );

  app.post(
    '/plus/:plusId/context-for-prompt',
    {
      schema: {
        tags,
        operationId: 'getPlusContextForPrompt',
        summary: 'Get context for a prompt from a Plus entry',
        params: PlusParams,
        body: ContextForPromptBody,
        response: { 200: ContextForPromptResponse, ...bodyErrorResponses },
      },
    },
    async (req) => plus.contextForPrompt(principalOf(req), req.params.plusId, req.body.content, req.body.maxTokens, req.body.explain ?? false),
  );

  app.get(
    '/plus/file/:fileId/content',
    {
      schema: {
        tags,
        operationId: 'getPlusFileContent',
        summary: 'Get file content (the original bytes)',
        params: FileParams,
        response: {
          200: { description: 'the file as uploaded', content: { 'application/octet-stream': { schema: Type.String({ format: 'binary' }) } } },
          ...errorResponses,
        },
      },
    },
    async (req, reply) => {
      const { file, content } = await plus.fileContent(principalOf(req), req.params.fileId);
      return (
        reply
          .type(file.mimeType)
          .header('content-disposition', attachmentHeader(file.filename))
          // nosniff and a sandboxing policy come with every API answer (http/security-headers.ts)
          .send(content)
      );
    },
  );

  app.delete(
    '/plus/file/:fileId',
    { schema: { tags, operationId: 'deletePlusFile', summary: 'Delete a file', params: FileParams, response: { 200: DeleteResponse, ...errorResponses } } },
    async (req) => {
      await plus.deleteFile(principalOf(req), req.params.fileId);
      return { deleted: true };
    },
  );
};
