import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { principalOf } from '../../http/auth.js';
import { openAIStreamError, toOpenAIError } from '../../http/openai-errors.js';
import { SseWriter } from '../../http/sse.js';
import { OPENAI_STREAM_DESCRIPTION, OpenAIChatRequest, OpenAIImageRequest, OpenAIModel } from './schema.js';
import { IMAGE_TURN_BODY_BYTES } from '../chat/images.js';
import type { OpenAICompatService } from './service.js';

export interface OpenAICompatRouteDeps {
  compat: OpenAICompatService;
  /** interval of the SSE `: ping` comment */
  heartbeatMs: number;
  /** the server's JSON body limit (chat completions take at least IMAGE_TURN_BODY_BYTES, for images) */
  bodyLimitBytes: number;
}

const DESCRIPTIONS: Record<number, string> = {
  400: 'invalid_request_error: malformed JSON, a wrong type, a value out of range, an unsupported message',
  401: 'authentication_error: no or unknown API key',
  403: 'permission_error',
  404: 'model_not_found: no such workspace (or model in it) visible to the caller; or an unknown thread or Plus entry',
  413: 'invalid_request_error: body too large',
  415: 'invalid_request_error: send application/json',
  429: 'rate_limit_error (with Retry-After)',
  502: 'api_error: the model provider failed',
  504: 'api_error: the model provider timed out',
};

/** SDKs send the id's slashes as %2F; a malformed escape stays as sent (and is then not found). */
function decodedOnce(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** Error answers in OpenAI's shape, for a route's `response` schema (and so the OpenAPI document). */
function openAIErrors(...statuses: number[]) {
  return Object.fromEntries(statuses.map((s) => [s, { description: DESCRIPTIONS[s]!, content: { 'application/json': { schema: Type.Ref('OpenAIError') } } }]));
}

/** `/v1`: OpenAI's protocol. The scope's hooks and its error rendering are set up in app.ts (http/openai-errors.ts). */
export const openaiCompatRoutes: FastifyPluginAsyncTypebox<OpenAICompatRouteDeps> = async (app, { compat, heartbeatMs, bodyLimitBytes }) => {
  const tags = ['openai'];

  app.get(
    '/models',
    {
      schema: {
        tags,
        operationId: 'listOpenAIModels',
        summary: 'List the workspaces (and their models) as OpenAI models',
        response: { 200: Type.Ref('OpenAIModelList'), ...openAIErrors(401, 403) },
      },
    },
    async (req) => compat.listModels(principalOf(req)),
  );

  const ModelIdParam = Type.String({ maxLength: 200, description: 'the model id; its slashes may be sent as %2F' });
  app.get(
    '/models/*',
    {
      // The route takes the rest of the path, slashes included; the document names that part
      // `{model}` (as OpenAI's does) rather than Fastify's `*`, which is no OpenAPI template.
      config: {
        swaggerTransform: ({ schema, url }) => ({
          url: url.replace(/\*$/, ':model'),
          schema: { ...schema, params: Type.Object({ model: ModelIdParam }) },
        }),
      },
      schema: {
        tags,
        operationId: 'getOpenAIModel',
        summary: 'One model of GET /v1/models by its id (`workspace/<workspaceId>` or `workspace/<workspaceId>/<modelId>`)',
        params: Type.Object({ '*': ModelIdParam }),
        response: { 200: OpenAIModel, ...openAIErrors(400, 401, 403, 404) },
      },
    },
    async (req) => compat.getModel(principalOf(req), decodedOnce(req.params['*'])),
  );

  app.post(
    '/images/generations',
    {
      schema: {
        tags,
        operationId: 'createOpenAIImage',
        summary: "OpenAI-compatible image generation by a workspace's image model (imageGen), answered as b64_json",
        body: OpenAIImageRequest,
        response: { 200: Type.Ref('OpenAIImagesResponse'), ...openAIErrors(400, 401, 403, 404, 413, 415, 429, 502, 504) },
      },
    },
    async (req, reply) => {
      const abort = new AbortController();
      reply.raw.on('close', () => {
        if (!reply.raw.writableFinished) abort.abort();
      });
      return compat.generateImages(principalOf(req), req.body, abort.signal);
    },
  );

  app.post(
    '/chat/completions',
    {
      bodyLimit: Math.max(bodyLimitBytes, IMAGE_TURN_BODY_BYTES),
      schema: {
        tags,
        operationId: 'createOpenAIChatCompletion',
        summary: 'OpenAI-compatible chat completion, plain or streamed',
        description: OPENAI_STREAM_DESCRIPTION,
        body: OpenAIChatRequest,
        response: {
          200: {
            description: 'A chat.completion; with `stream: true`, an event stream of chat.completion.chunk',
            content: {
              'application/json': { schema: Type.Ref('OpenAIChatCompletion') },
              'text/event-stream': { schema: Type.Ref('OpenAIChatCompletionChunk') },
            },
          },
          ...openAIErrors(400, 401, 403, 404, 413, 415, 429, 502, 504),
        },
      },
    },
    async (req, reply) => {
      const caller = principalOf(req);
      if (req.body.stream !== true) {
        // A client that hangs up on a plain completion also cancels the provider call.
        const abort = new AbortController();
        reply.raw.on('close', () => {
          if (!reply.raw.writableFinished) abort.abort();
        });
        return compat.complete(caller, req.body, abort.signal);
      }
      const sse = new SseWriter(reply, { heartbeatMs });
      const items = compat.stream(caller, req.body, sse.abort.signal);
      // Failures before the first chunk (validation, model, storing the turn) are thrown here and
      // answered as ordinary JSON errors with their status; the stream opens only after them.
      const first = await items.next();
      sse.open();
      try {
        for (let r = first; !r.done; r = await items.next()) {
          const v = r.value;
          sse.sendData(JSON.stringify('chunk' in v ? v.chunk : openAIStreamError(v.error)));
        }
      } catch (err) {
        const e = toOpenAIError(err);
        if (e.isBug) req.log.error({ err }, 'stream failed');
        sse.sendData(JSON.stringify(e.body));
      } finally {
        sse.sendData('[DONE]');
        sse.end();
      }
    },
  );
};
