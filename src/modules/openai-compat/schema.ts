import { Type, type Static } from 'typebox';
import { INT32_MAX, Nullable, Uuid } from '../../http/schemas.js';
import { SourceSchema } from '../chat/schema.js';

/**
 * OpenAI's chat-completions protocol as Atrium accepts and answers it (docs/API.md,
 * "OpenAI-compatible API"). Every object is open (`additionalProperties`): a field Atrium does not
 * know (`seed`, `response_format`, …) is ignored, never a 400. Known fields are checked. Tools
 * (`tools`, `tool_choice`, `parallel_tool_calls`, assistant `tool_calls`, `tool` messages) are passed
 * to the provider in its own form (src/providers/README.md "Tools"); the older `functions` /
 * `function_call` are refused (400 `tools_unsupported`, service.ts), never dropped.
 */
const MAX_TEXT = 1_000_000;
const FunctionName = Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$', description: 'letters, digits, `_` and `-`, at most 64' });
const CallId = Type.String({ minLength: 1, maxLength: 200 });

/** A call the model made, in an assistant message (request) or an answer. */
export const OpenAIToolCall = Type.Object(
  {
    id: CallId,
    type: Type.Literal('function'),
    function: Type.Object(
      { name: FunctionName, arguments: Type.String({ maxLength: MAX_TEXT, description: 'the arguments object as JSON text' }) },
      { additionalProperties: true },
    ),
  },
  { additionalProperties: true },
);
export type OpenAIToolCallT = Static<typeof OpenAIToolCall>;

/** A function the model may call. */
export const OpenAITool = Type.Object(
  {
    type: Type.Literal('function'),
    function: Type.Object(
      {
        name: FunctionName,
        description: Type.Optional(Type.String({ maxLength: 10_000 })),
        parameters: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'JSON Schema of the arguments object' })),
        strict: Type.Optional(Nullable(Type.Boolean({ description: 'passed to OpenAI-protocol models; Anthropic and Gemini have no such switch' }))),
      },
      { additionalProperties: true },
    ),
  },
  { additionalProperties: true },
);
export type OpenAIToolT = Static<typeof OpenAITool>;

export const OpenAIToolChoice = Type.Union(
  [
    Type.Union([Type.Literal('none'), Type.Literal('auto'), Type.Literal('required')]),
    Type.Object(
      { type: Type.Literal('function'), function: Type.Object({ name: FunctionName }, { additionalProperties: true }) },
      { additionalProperties: true },
    ),
  ],
  { description: '`none`, `auto`, `required`, or `{type: "function", function: {name}}` (one of `tools`)' },
);
export type OpenAIToolChoiceT = Static<typeof OpenAIToolChoice>;

const ContentPart = Type.Object(
  {
    type: Type.String({ maxLength: 100 }),
    text: Type.Optional(Type.String({ maxLength: MAX_TEXT })),
    image_url: Type.Optional(
      Type.Object(
        { url: Type.String({ description: 'a data URL, data:<type>;base64,<data> (web addresses are refused with 400)' }) },
        { additionalProperties: true },
      ),
    ),
  },
  {
    additionalProperties: true,
    description: 'a content part: `text`, or in a user message `image_url` (PNG, JPEG, WebP or GIF as a data URL, for a model with vision)',
  },
);

export const OpenAIMessage = Type.Object(
  {
    role: Type.String({ maxLength: 100, description: '`system`, `developer`, `user`, `assistant` or `tool`' }),
    content: Type.Optional(Nullable(Type.Union([Type.String({ maxLength: MAX_TEXT }), Type.Array(ContentPart, { maxItems: 100 })]))),
    tool_calls: Type.Optional(Nullable(Type.Array(OpenAIToolCall, { maxItems: 128, description: 'assistant only: the calls the model made' }))),
    tool_call_id: Type.Optional(Nullable(Type.String({ maxLength: 200, description: 'tool only (required there): the id of the call this message answers' }))),
  },
  { additionalProperties: true },
);
export type OpenAIMessageT = Static<typeof OpenAIMessage>;

const Penalty = Nullable(Type.Number({ minimum: -2, maximum: 2 }));
const MaxTokens = Nullable(Type.Integer({ minimum: 1, maximum: INT32_MAX }));

export const OpenAIChatRequest = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 200, description: '`workspace/<workspaceId>` or `workspace/<workspaceId>/<modelId>` (see GET /v1/models)' }),
    messages: Type.Array(OpenAIMessage, { minItems: 1, maxItems: 500 }),
    stream: Type.Optional(Nullable(Type.Boolean())),
    stream_options: Type.Optional(Nullable(Type.Object({ include_usage: Type.Optional(Nullable(Type.Boolean())) }, { additionalProperties: true }))),
    temperature: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 2 }))),
    top_p: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 1 }))),
    max_tokens: Type.Optional(MaxTokens),
    max_completion_tokens: Type.Optional(MaxTokens),
    n: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 1, description: 'only 1 is supported' }))),
    stop: Type.Optional(
      Nullable(Type.Union([Type.String({ minLength: 1, maxLength: 500 }), Type.Array(Type.String({ minLength: 1, maxLength: 500 }), { maxItems: 4 })])),
    ),
    presence_penalty: Type.Optional(Penalty),
    tools: Type.Optional(Nullable(Type.Array(OpenAITool, { maxItems: 128 }))),
    tool_choice: Type.Optional(Nullable(OpenAIToolChoice)),
    parallel_tool_calls: Type.Optional(Nullable(Type.Boolean({ description: 'false: at most one call per answer (not on Gemini, which has no such switch)' }))),
    frequency_penalty: Type.Optional(Penalty),
    logit_bias: Type.Optional(
      Nullable(
        Type.Record(Type.String({ pattern: '^[0-9]+$' }), Type.Number({ minimum: -100, maximum: 100 }), { maxProperties: 300, additionalProperties: false }),
      ),
    ),
    user: Type.Optional(Nullable(Type.String({ description: 'accepted and ignored: the prompt log is kept under the caller of the API key' }))),
    metadata: Type.Optional(Nullable(Type.Object({}, { additionalProperties: true, description: 'accepted and ignored' }))),
    atrium: Type.Optional(
      Nullable(
        Type.Object(
          {
            threadId: Type.Optional(Uuid),
            store: Type.Optional(Type.Boolean({ description: 'true: keep the turn in a new thread (default false: no thread is stored)' })),
            plusIds: Type.Optional(Type.Array(Uuid, { maxItems: 50 })),
          },
          { additionalProperties: true, description: 'Atrium extension: continue or keep a thread, add Plus entries' },
        ),
      ),
    ),
  },
  { additionalProperties: true },
);
export type OpenAIChatRequestT = Static<typeof OpenAIChatRequest>;

const OpenAIUsage = Type.Object({ prompt_tokens: Type.Integer(), completion_tokens: Type.Integer(), total_tokens: Type.Integer() });
const AtriumInfo = Type.Object({ threadId: Nullable(Uuid), messageId: Nullable(Uuid), modelId: Uuid });
const FinishReason = Type.Union([Type.Literal('stop'), Type.Literal('length'), Type.Literal('content_filter'), Type.Literal('tool_calls')]);

export const OpenAIChatCompletion = Type.Object(
  {
    id: Type.String(),
    object: Type.Literal('chat.completion'),
    created: Type.Integer({ description: 'Unix time, seconds' }),
    model: Type.String(),
    system_fingerprint: Type.Null(),
    choices: Type.Array(
      Type.Object({
        index: Type.Integer(),
        message: Type.Object({
          role: Type.Literal('assistant'),
          content: Nullable(Type.String({ description: 'null when the answer is only tool calls' })),
          refusal: Type.Null(),
          tool_calls: Type.Optional(Type.Array(OpenAIToolCall)),
        }),
        finish_reason: FinishReason,
        logprobs: Type.Null(),
      }),
    ),
    usage: OpenAIUsage,
    atrium_sources: Type.Optional(Type.Array(SourceSchema, { description: 'the document context used, when any' })),
    atrium: AtriumInfo,
  },
  { $id: 'OpenAIChatCompletion' },
);
export type OpenAIChatCompletionT = Static<typeof OpenAIChatCompletion>;

export const OpenAIErrorBody = Type.Object(
  {
    message: Type.String(),
    type: Type.String({ description: 'invalid_request_error, authentication_error, permission_error, rate_limit_error, api_error, server_error' }),
    param: Nullable(Type.String()),
    code: Nullable(Type.String()),
  },
  { additionalProperties: false },
);
export type OpenAIErrorBodyT = Static<typeof OpenAIErrorBody>;
export const OpenAIError = Type.Object({ error: OpenAIErrorBody }, { $id: 'OpenAIError' });

/** A piece of a streamed call: the first of each `index` has `id`, `type` and `function.name`; later ones add to `function.arguments`. */
const OpenAIToolCallDelta = Type.Object({
  index: Type.Integer(),
  id: Type.Optional(Type.String()),
  type: Type.Optional(Type.Literal('function')),
  function: Type.Object({ name: Type.Optional(Type.String()), arguments: Type.String() }),
});

export const OpenAIChatCompletionChunk = Type.Object(
  {
    id: Type.String(),
    object: Type.Literal('chat.completion.chunk'),
    created: Type.Integer(),
    model: Type.String(),
    system_fingerprint: Type.Null(),
    choices: Type.Array(
      Type.Object({
        index: Type.Integer(),
        delta: Type.Object({
          role: Type.Optional(Type.Literal('assistant')),
          content: Type.Optional(Type.String()),
          tool_calls: Type.Optional(Type.Array(OpenAIToolCallDelta)),
        }),
        finish_reason: Nullable(FinishReason),
        logprobs: Type.Null(),
      }),
    ),
    usage: Type.Optional(Nullable(OpenAIUsage)),
    atrium_sources: Type.Optional(Type.Array(SourceSchema)),
    atrium: Type.Optional(AtriumInfo),
  },
  {
    $id: 'OpenAIChatCompletionChunk',
    description:
      'the data of each `data:` line of a stream (one with `error` instead when the turn fails after the stream started), which ends with `data: [DONE]`',
  },
);
export type OpenAIChatCompletionChunkT = Static<typeof OpenAIChatCompletionChunk>;

export const OpenAIModel = Type.Object({
  id: Type.String({ description: '`workspace/<workspaceId>` (its first model) or `workspace/<workspaceId>/<modelId>`' }),
  object: Type.Literal('model'),
  created: Type.Integer(),
  owned_by: Type.String(),
  atrium: Type.Object({ workspaceId: Uuid, workspaceName: Type.String(), modelId: Nullable(Uuid), modelName: Nullable(Type.String()) }),
});
export type OpenAIModelT = Static<typeof OpenAIModel>;
export const OpenAIModelList = Type.Object({ object: Type.Literal('list'), data: Type.Array(OpenAIModel) }, { $id: 'OpenAIModelList' });
export type OpenAIModelListT = Static<typeof OpenAIModelList>;

/** What the OpenAPI document says of the event stream. */
export const OPENAI_STREAM_DESCRIPTION = [
  'With `stream: true`: server-sent events, each a `data:` line holding one OpenAIChatCompletionChunk as JSON',
  '(no `event:`, `id:` or `retry:` lines; `: ping` comment lines may come between events).',
  'The first chunk carries `delta.role`, `atrium` and, when document context was used, `atrium_sources`;',
  'then content chunks and tool-call chunks (`delta.tool_calls`: the first piece of each call has `index`, `id`, `type` and `function.name`,',
  'later pieces add to `function.arguments` by `index`); then a chunk with `finish_reason`; with `stream_options.include_usage` a last chunk',
  'with empty `choices` and `usage`. A failure after the stream started is one `data: {"error": {…}}` line.',
  'The stream always ends with `data: [DONE]`. Without `stream`: one OpenAIChatCompletion.',
].join(' ');

/** POST /v1/images/generations: OpenAI's image request, for a workspace's image model (`imageGen`). */
export const OpenAIImageRequest = Type.Object(
  {
    model: Type.String({
      minLength: 1,
      maxLength: 200,
      description: '`workspace/<workspaceId>/<modelId>` (or `workspace/<workspaceId>`: its first model) of a model with imageGen',
    }),
    prompt: Type.String({ minLength: 1, maxLength: 32_000 }),
    n: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 1, description: 'only 1 is supported' }))),
    response_format: Type.Optional(Nullable(Type.Literal('b64_json', { description: 'only b64_json: Atrium keeps no image of this call to link to' }))),
    size: Type.Optional(Nullable(Type.String({ maxLength: 50, description: 'accepted and ignored: the model decides' }))),
    user: Type.Optional(Nullable(Type.String({ description: 'accepted and ignored' }))),
  },
  { additionalProperties: true },
);
export type OpenAIImageRequestT = Static<typeof OpenAIImageRequest>;

export const OpenAIImagesResponse = Type.Object(
  {
    created: Type.Integer({ description: 'Unix time, seconds' }),
    data: Type.Array(Type.Object({ b64_json: Type.String() })),
    usage: Type.Object({ input_tokens: Type.Integer(), output_tokens: Type.Integer(), total_tokens: Type.Integer() }),
  },
  { $id: 'OpenAIImagesResponse' },
);
export type OpenAIImagesResponseT = Static<typeof OpenAIImagesResponse>;
