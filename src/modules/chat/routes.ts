import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { principalOf } from '../../http/auth.js';
import { readMultipart, type MultipartLimits } from '../../http/multipart.js';
import { statusOf } from '../../errors.js';
import { toProblem } from '../../http/problem.js';
import { bodyErrorResponses, DeleteResponse, errorResponses, problems, Uuid } from '../../http/schemas.js';
import { SseWriter } from '../../http/sse.js';
import { plusAnswer } from '../plus/answer.js';
import { ChatAddFileQuery, FilesForm } from '../plus/schema.js';
import { PageOf } from '../../http/paging.js';
import {
  ActiveVersionBody,
  CHAT_STREAM_DESCRIPTION,
  ChatCompletionRequest,
  ChatSearchQuery,
  Prompt,
  RenameThreadBody,
  UpdateThreadBody,
  SamplePromptsQuery,
  ThreadExportQuery,
  ThreadMessagesQuery,
} from './schema.js';
import { EXPORT_CONTENT_TYPES } from './export.js';
import { attachmentHeader } from '../../http/download.js';
import { Readable } from 'node:stream';
import type { ChatService } from './service.js';
import type { TurnService } from './turns.js';
import { IMAGE_TURN_BODY_BYTES } from './images.js';

export interface ChatRouteDeps {
  chat: ChatService;
  turns: TurnService;
  limits: MultipartLimits;
  /** interval of the SSE `: ping` comment */
  heartbeatMs: number;
  /** the server's JSON body limit (turn routes take at least IMAGE_TURN_BODY_BYTES, for images) */
  bodyLimitBytes: number;
}

export const chatRoutes: FastifyPluginAsyncTypebox<ChatRouteDeps> = async (app, { chat, turns, limits, heartbeatMs, bodyLimitBytes }) => {
  const tags = ['chat'];
  const Ws = Type.Object({ workspaceId: Uuid });
  const WsThread = Type.Object({ workspaceId: Uuid, threadId: Uuid });
  const upstream = problems(429, 502, 504);
  // A turn may carry up to 8 images of 10 MB (base64 in the JSON body): its routes take that much.
  const bodyLimit = Math.max(bodyLimitBytes, IMAGE_TURN_BODY_BYTES);
  const imageRefusals = problems(413, 415);

  app.post(
    '/chat/:workspaceId/completions',
    {
      bodyLimit,
      schema: {
        tags,
        operationId: 'createChatCompletion',
        summary: 'Add a new chat message',
        params: Ws,
        body: ChatCompletionRequest,
        response: { 200: Type.Ref('ChatAnswer'), ...bodyErrorResponses, ...imageRefusals, ...upstream },
      },
    },
    async (req, reply) => {
      // A client that hangs up on a plain completion also cancels the provider call.
      const abort = new AbortController();
      reply.raw.on('close', () => {
        if (!reply.raw.writableFinished) abort.abort();
      });
      return turns.complete(principalOf(req), req.params.workspaceId, req.body, abort.signal);
    },
  );

  app.post(
    '/chat/:workspaceId/completions/stream',
    {
      bodyLimit,
      schema: {
        tags,
        operationId: 'streamChatCompletion',
        summary: 'Add a chat message, streamed response (text/event-stream)',
        description: CHAT_STREAM_DESCRIPTION,
        params: Ws,
        body: ChatCompletionRequest,
        response: {
          200: {
            description: 'An event stream; the data of each event is a ChatStreamEvent',
            content: { 'text/event-stream': { schema: Type.Ref('ChatStreamEvent') } },
          },
          ...bodyErrorResponses,
          ...imageRefusals,
        },
      },
    },
    async (req, reply) => {
      const sse = new SseWriter(reply, { heartbeatMs, retryMs: 3000 });
      const events = turns.run(principalOf(req), req.params.workspaceId, req.body, { stream: true, signal: sse.abort.signal });
      // The first event comes after validation and storing the user's turn: failures before it are
      // thrown here and answered as ordinary problem+json, before the stream opens.
      const first = await events.next();
      sse.open();
      try {
        for (let r = first; !r.done; r = await events.next()) {
          const { type, ...data } = r.value;
          if (r.value.type === 'error') sse.send('error', { status: statusOf(r.value.kind), code: r.value.code, detail: r.value.detail });
          else if (r.value.type === 'tool_run') sse.send('tool_call', r.value.call);
          else if (r.value.type === 'image') sse.send('image', { id: r.value.id, mimeType: r.value.mimeType, width: r.value.width, height: r.value.height });
          else sse.send(type, type === 'done' ? { finishReason: r.value.finishReason, usage: r.value.usage } : data);
        }
      } catch (err) {
        const { problem, isBug } = toProblem(err);
        if (isBug) req.log.error({ err }, 'stream failed');
        sse.send('error', { status: problem.status, code: problem.code, detail: problem.detail });
      } finally {
        sse.end();
      }
    },
  );

  app.get(
    '/chat/images/:imageId',
    {
      schema: {
        tags,
        operationId: 'getChatImage',
        summary: "An image of a message (a user's or a generated one), for whoever may read its thread",
        params: Type.Object({ imageId: Uuid }),
        response: {
          200: {
            description: 'the image bytes, with their type (image/png, image/jpeg, image/webp or image/gif)',
            content: { 'image/*': { schema: Type.String({ format: 'binary' }) } },
          },
          ...errorResponses,
        },
      },
    },
    async (req, reply) => {
      const img = await chat.image(principalOf(req), req.params.imageId);
      // An image never changes under its id; it is private to those who may read the thread.
      return reply
        .type(img.mimeType)
        .header('cache-control', 'private, max-age=86400, immutable')
        .header('x-content-type-options', 'nosniff')
        .header('content-security-policy', "default-src 'none'; sandbox")
        .send(img.data);
    },
  );

  app.get(
    '/chat/search',
    {
      schema: {
        tags,
        operationId: 'searchChats',
        summary: 'Search the threads the caller may read (message texts and titles), best match first',
        querystring: ChatSearchQuery,
        response: { 200: PageOf(Type.Ref('ChatSearchHit')), ...errorResponses },
      },
    },
    async (req) => chat.search(principalOf(req), req.query),
  );
  app.get(
    '/chat/:workspaceId/history',
    {
      schema: {
        tags,
        operationId: 'listChatThreads',
        summary: 'Retrieve chat history of a workspace (newest first)',
        params: Ws,
        response: { 200: Type.Array(Type.Ref('ChatThread')), ...errorResponses },
      },
    },
    async (req) => chat.listThreads(principalOf(req), req.params.workspaceId),
  );
  app.delete(
    '/chat/:workspaceId/history',
    {
      schema: {
        tags,
        operationId: 'deleteChatHistory',
        summary: 'Delete all chat history of a workspace (the threads the caller may delete)',
        params: Ws,
        response: { 200: DeleteResponse, ...errorResponses },
      },
    },
    async (req) => {
      await chat.deleteHistory(principalOf(req), req.params.workspaceId);
      return { deleted: true };
    },
  );
  app.get(
    '/chat/:workspaceId/history/:threadId',
    {
      schema: {
        tags,
        operationId: 'getChatThread',
        summary: 'Retrieve a chat thread (all its messages, or one page of them, paging back from the newest)',
        params: WsThread,
        querystring: ThreadMessagesQuery,
        response: { 200: Type.Ref('ChatThread_Full'), ...errorResponses },
      },
    },
    async (req) => chat.getThread(principalOf(req), req.params.workspaceId, req.params.threadId, req.query),
  );
  app.get(
    '/chat/:workspaceId/history/:threadId/export',
    {
      schema: {
        tags,
        operationId: 'exportChatThread',
        summary: 'Download a chat thread (all its messages) as a Markdown or JSON file',
        params: WsThread,
        querystring: ThreadExportQuery,
        response: {
          200: {
            description: 'The thread as an attachment: a Markdown document (format=md, the default) or a ChatThreadExport (format=json)',
            content: {
              'text/markdown': { schema: Type.String() },
              'application/json': { schema: Type.Ref('ChatThreadExport') },
            },
          },
          ...errorResponses,
        },
      },
    },
    async (req, reply) => {
      const format = req.query.format;
      const file = await chat.exportThread(principalOf(req), req.params.workspaceId, req.params.threadId, format);
      return reply
        .type(EXPORT_CONTENT_TYPES[format])
        .header('content-disposition', attachmentHeader(file.filename))
        .header('x-content-type-options', 'nosniff')
        .send(Readable.from(utf8(file.chunks), { objectMode: false }));
    },
  );
  app.get(
    '/chat/:workspaceId/history/:threadId/versions/:messageId',
    {
      schema: {
        tags,
        operationId: 'listChatMessageVersions',
        summary: "A message's versions (edits of a question, regenerations of an answer), oldest first",
        params: Type.Object({ workspaceId: Uuid, threadId: Uuid, messageId: Uuid }),
        response: { 200: Type.Array(Type.Object({ id: Uuid, created: Type.String({ format: 'date-time' }) })), ...errorResponses },
      },
    },
    async (req) => chat.versionsOf(principalOf(req), req.params.workspaceId, req.params.threadId, req.params.messageId),
  );
  app.post(
    '/chat/:workspaceId/history/:threadId/active',
    {
      schema: {
        tags,
        operationId: 'setActiveChatVersion',
        summary: "Show another version: the path through the message named becomes the thread's active path",
        params: WsThread,
        body: ActiveVersionBody,
        response: { 200: Type.Ref('ChatThread_Full'), ...bodyErrorResponses },
      },
    },
    async (req) => chat.setActive(principalOf(req), req.params.workspaceId, req.params.threadId, req.body.messageId),
  );
  app.post(
    '/chat/:workspaceId/history/:threadId',
    {
      schema: {
        tags,
        operationId: 'renameChatThread',
        summary: 'Update the title of a chat thread',
        params: WsThread,
        body: RenameThreadBody,
        response: { 200: Type.Ref('ChatThread_Full'), ...bodyErrorResponses },
      },
    },
    async (req) => chat.renameThread(principalOf(req), req.params.workspaceId, req.params.threadId, req.body.title),
  );
  app.patch(
    '/chat/:workspaceId/history/:threadId',
    {
      schema: {
        tags,
        operationId: 'updateChatThread',
        summary: 'Rename and/or pin a chat thread (a pinned thread is never deleted by retention)',
        params: WsThread,
        body: UpdateThreadBody,
        response: { 200: Type.Ref('ChatThread_Full'), ...bodyErrorResponses },
      },
    },
    async (req) => chat.updateThread(principalOf(req), req.params.workspaceId, req.params.threadId, req.body),
  );
  app.delete(
    '/chat/:workspaceId/history/:threadId',
    {
      schema: {
        tags,
        operationId: 'deleteChatThread',
        summary: 'Delete a chat thread',
        params: WsThread,
        response: { 200: DeleteResponse, ...errorResponses },
      },
    },
    async (req) => {
      await chat.deleteThread(principalOf(req), req.params.workspaceId, req.params.threadId);
      return { deleted: true };
    },
  );
  app.get(
    '/chat/:workspaceId/greeting',
    { schema: { tags, operationId: 'getGreeting', summary: 'Retrieve the greeting of a workspace', params: Ws, response: { 200: Prompt, ...errorResponses } } },
    async (req) => chat.greeting(principalOf(req), req.params.workspaceId),
  );
  app.get(
    '/chat/:workspaceId/sample-prompts',
    {
      schema: {
        tags,
        operationId: 'listSamplePrompts',
        summary: 'Retrieve sample prompts',
        params: Ws,
        querystring: SamplePromptsQuery,
        response: { 200: Type.Array(Prompt), ...errorResponses },
      },
    },
    async (req) => chat.samplePrompts(principalOf(req), req.params.workspaceId, req.query.limit),
  );

  app.post(
    '/chat/:plusId/add-file',
    {
      schema: {
        tags: ['chat'],
        operationId: 'addPlusFilesFromChat',
        summary: 'Add files to a Plus entry from a chat',
        consumes: ['multipart/form-data'],
        params: Type.Object({ plusId: Uuid }),
        querystring: ChatAddFileQuery,
        body: FilesForm,
        response: { 200: Type.Ref('Plus'), ...bodyErrorResponses, ...problems(409, 502, 504) },
      },
    },
    async (req, reply) => {
      const caller = principalOf(req);
      const { files } = await readMultipart(req, limits);
      const entry = await chat.addFiles(caller, req.params.plusId, files, {
        ...(req.query.threadId ? { threadId: req.query.threadId } : {}),
        ...(req.query.models ? { models: req.query.models } : {}),
        summarize: req.query.summarize,
      });
      return plusAnswer(reply, entry);
    },
  );
};

/** Chunks as UTF-8 bytes (a lone surrogate becomes U+FFFD, so the body is always valid UTF-8). */
async function* utf8(chunks: AsyncIterable<string>): AsyncGenerator<Buffer> {
  for await (const c of chunks) yield Buffer.from(c, 'utf8');
}
