import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { principalOf } from '../../http/auth.js';
import { statusOf, toProblem } from '../../http/problem.js';
import { bodyErrorResponses, DeleteResponse, errorResponses, problems, Uuid } from '../../http/schemas.js';
import { SseWriter } from '../../http/sse.js';
import type { Services } from '../../services.js';
import { CHAT_STREAM_DESCRIPTION, ChatCompletionRequest, Prompt, RenameThreadBody, SamplePromptsQuery } from './schema.js';

export const chatRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  const chat = services.chat;
  const tags = ['chat'];
  const Ws = Type.Object({ workspaceId: Uuid });
  const WsThread = Type.Object({ workspaceId: Uuid, threadId: Uuid });
  const upstream = problems(502, 504);

  app.post(
    '/chat/:workspaceId/completions',
    { schema: { tags, operationId: 'createChatCompletion', summary: 'Add a new chat message', params: Ws, body: ChatCompletionRequest, response: { 200: Type.Ref('ChatAnswer'), ...bodyErrorResponses, ...upstream } } },
    async (req, reply) => {
      // A client that hangs up on a plain completion also cancels the provider call.
      const abort = new AbortController();
      reply.raw.on('close', () => {
        if (!reply.raw.writableFinished) abort.abort();
      });
      return chat.complete(principalOf(req), req.params.workspaceId, req.body, abort.signal);
    },
  );

  app.post(
    '/chat/:workspaceId/completions/stream',
    {
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
        },
      },
    },
    async (req, reply) => {
      // Validation, visibility and storing the user's turn happen before the stream opens, so
      // those failures are ordinary problem+json answers.
      const turn = await chat.startTurn(principalOf(req), req.params.workspaceId, req.body);
      const sse = new SseWriter(req, reply);
      sse.open();
      sse.send('start', { threadId: turn.threadId, messageId: turn.messageId, modelId: turn.modelId });
      try {
        for await (const ev of chat.streamTurn(turn, sse.abort.signal)) {
          if (ev.type === 'error') sse.send('error', { status: statusOf(ev.kind), code: ev.code, detail: ev.detail });
          else {
            const { type, ...data } = ev;
            sse.send(type, data);
          }
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
    '/chat/:workspaceId/history',
    { schema: { tags, operationId: 'listChatThreads', summary: 'Retrieve chat history of a workspace (newest first)', params: Ws, response: { 200: Type.Array(Type.Ref('ChatThread')), ...errorResponses } } },
    async (req) => chat.listThreads(principalOf(req), req.params.workspaceId),
  );
  app.delete(
    '/chat/:workspaceId/history',
    { schema: { tags, operationId: 'deleteChatHistory', summary: 'Delete all chat history of a workspace (the threads the caller may delete)', params: Ws, response: { 200: DeleteResponse, ...errorResponses } } },
    async (req) => {
      await chat.deleteHistory(principalOf(req), req.params.workspaceId);
      return { deleted: true };
    },
  );
  app.get(
    '/chat/:workspaceId/history/:threadId',
    { schema: { tags, operationId: 'getChatThread', summary: 'Retrieve a chat thread', params: WsThread, response: { 200: Type.Ref('ChatThread_Full'), ...errorResponses } } },
    async (req) => chat.getThread(principalOf(req), req.params.workspaceId, req.params.threadId),
  );
  app.post(
    '/chat/:workspaceId/history/:threadId',
    { schema: { tags, operationId: 'renameChatThread', summary: 'Update the title of a chat thread', params: WsThread, body: RenameThreadBody, response: { 200: Type.Ref('ChatThread_Full'), ...bodyErrorResponses } } },
    async (req) => chat.renameThread(principalOf(req), req.params.workspaceId, req.params.threadId, req.body.title),
  );
  app.delete(
    '/chat/:workspaceId/history/:threadId',
    { schema: { tags, operationId: 'deleteChatThread', summary: 'Delete a chat thread', params: WsThread, response: { 200: DeleteResponse, ...errorResponses } } },
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
    { schema: { tags, operationId: 'listSamplePrompts', summary: 'Retrieve sample prompts', params: Ws, querystring: SamplePromptsQuery, response: { 200: Type.Array(Prompt), ...errorResponses } } },
    async (req) => chat.samplePrompts(principalOf(req), req.params.workspaceId, req.query.limit),
  );
};
