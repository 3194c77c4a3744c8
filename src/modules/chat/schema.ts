import { Type, type Static } from 'typebox';
import { RankingSchema } from '../plus/schema.js';
import { DateTime, GenerationParamFields, Int32, Nullable, Uuid } from '../../http/schemas.js';

const Role = Type.Union([Type.Literal('system'), Type.Literal('user'), Type.Literal('assistant')]);
const MAX_TEXT = 1_000_000;

/** An image sent with a turn: checked by its bytes, not by the declared type (docs/API.md, "Images"). */
export const ImageInputSchema = Type.Object(
  {
    mimeType: Type.String({ maxLength: 100, description: 'image/png, image/jpeg, image/webp or image/gif (it must match the bytes)' }),
    data: Type.String({ description: 'the bytes, base64; at most 10 MB decoded and 8,192 px a side' }),
  },
  { additionalProperties: false },
);

/** An image of a message as the thread keeps it; its bytes: GET /api/v1/chat/images/{id}. */
export const ImageRefSchema = Type.Object({ id: Uuid, mimeType: Type.String(), width: Type.Integer(), height: Type.Integer() }, { $id: 'ChatImage' });

export const ChatCompletionRequest = Type.Object(
  {
    messages: Type.Optional(
      Type.Array(Type.Object({ role: Role, content: Type.String({ maxLength: MAX_TEXT }) }, { additionalProperties: false }), {
        minItems: 1,
        maxItems: 500,
      }),
    ),
    prompt: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_TEXT })),
    images: Type.Optional(
      Type.Array(ImageInputSchema, {
        maxItems: 100,
        description: 'images for the question (the last user turn), for a model with vision: at most 8 (413 beyond), PNG, JPEG, WebP or GIF',
      }),
    ),
    threadId: Type.Optional(Uuid),
    regenerate: Type.Optional(
      Type.String({
        format: 'uuid',
        description: 'an answer of a thread the caller reads: answer its question again, as a new version (send no prompt or messages)',
      }),
    ),
    editOf: Type.Optional(
      Type.String({
        format: 'uuid',
        description: 'a question (user message) of a thread the caller reads: `prompt`/`messages` are its new version, answered anew',
      }),
    ),
    modelId: Type.Optional(Uuid),
    plusIds: Type.Optional(Type.Array(Uuid, { maxItems: 50 })),
    ...GenerationParamFields,
    /** stop sequences for this turn (the workspace has none) */
    stop: Type.Optional(Nullable(Type.Array(Type.String({ minLength: 1, maxLength: 500 }), { maxItems: 4 }))),
  },
  { additionalProperties: false },
);
export type ChatCompletionRequestT = Static<typeof ChatCompletionRequest>;

export const UsageSchema = Type.Object({ promptTokens: Type.Integer(), completionTokens: Type.Integer(), totalTokens: Type.Integer() });
export const SourceSchema = Type.Object({
  plusId: Uuid,
  fileId: Nullable(Uuid),
  filename: Nullable(Type.String()),
  chunkId: Nullable(Type.Integer()),
  score: Type.Number({ description: 'final score (what ordered the chunks)' }),
  excerpt: Type.String(),
  rank: Type.Optional(
    Type.Integer({ minimum: 1, description: '1-based final rank among the candidate chunks (absent on answers stored before ranks were recorded)' }),
  ),
  ranking: Type.Optional(RankingSchema),
});

export const ChatAnswer = Type.Object(
  {
    threadId: Uuid,
    messageId: Uuid,
    modelId: Uuid,
    message: Type.Object({
      role: Type.Literal('assistant'),
      content: Type.String(),
      images: Type.Optional(Type.Array(Type.Ref('ChatImage'), { description: "an image model's answer: the images it made" })),
    }),
    finishReason: Type.String(),
    usage: UsageSchema,
    sources: Type.Array(SourceSchema),
    created: DateTime,
  },
  { $id: 'ChatAnswer' },
);
export type ChatAnswerT = Static<typeof ChatAnswer>;

const threadFields = {
  id: Uuid,
  workspaceId: Uuid,
  title: Type.String(),
  userId: Type.Integer(),
  created: DateTime,
  updated: DateTime,
  messageCount: Type.Integer({ description: "the messages on the thread's active path (as listed), not every version" }),
  pinned: Type.Boolean({ description: "kept by the team's retention whatever its age" }),
};
export const ChatThread = Type.Object(threadFields, { $id: 'ChatThread' });
/** A workspace tool the model called on the way to an answer (docs/API.md, "Tools in chat turns"). */
export const ToolCallRecord = Type.Object({
  id: Type.String(),
  name: Type.String(),
  arguments: Type.String({ description: 'JSON text, as the model wrote it' }),
  ok: Type.Boolean({ description: 'false: the call failed (content says why); the model was given the error' }),
  content: Type.String({ description: 'the result the model was given (cut at 16,000 tokens), or why the call failed' }),
  durationMs: Type.Integer(),
  step: Type.Integer({ minimum: 1, description: 'which of the turn’s provider calls asked for it' }),
});
export const ChatMessage = Type.Object({
  id: Uuid,
  role: Role,
  content: Type.String(),
  modelId: Nullable(Uuid),
  created: DateTime,
  usage: Nullable(UsageSchema),
  sources: Type.Array(SourceSchema),
  status: Type.Union([Type.Literal('ok'), Type.Literal('error'), Type.Literal('interrupted')]),
  /** why the turn failed: set on a message of status `error` (nothing was answered) or one a provider failure cut off */
  error: Nullable(Type.Object({ status: Type.Integer(), code: Type.String(), detail: Type.String() })),
  toolCalls: Type.Optional(Type.Array(ToolCallRecord, { description: 'the workspace tools called on the way to this answer, in order (absent: none)' })),
  versions: Type.Object(
    { index: Type.Integer({ minimum: 1 }), count: Type.Integer({ minimum: 1 }) },
    { description: "which of the message's versions (edits of a question, regenerations of an answer) this is, 1-based, in the order written" },
  ),
  images: Type.Optional(Type.Array(Type.Ref('ChatImage'), { description: "the user's images, or the images an image model answered (absent: none)" })),
});
export const ChatThreadFull = Type.Object(
  {
    ...threadFields,
    messages: Type.Array(ChatMessage, { description: "the thread's active path, oldest first" }),
    hasEarlier: Type.Optional(
      Type.Boolean({ description: 'answered when `limit` or `before` was given: whether messages older than the first one returned remain' }),
    ),
  },
  { $id: 'ChatThread_Full' },
);

/** A page of a thread's messages, newest last: the latest `limit`, or the `limit` before the message `before`. */
export const ThreadMessagesQuery = Type.Object({
  before: Type.Optional(
    Type.String({ format: 'uuid', description: 'a message of this thread: answer only the messages before it (the cursor for paging back)' }),
  ),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: 'at most this many messages, the latest first chosen (absent: every message)' })),
});

/**
 * docs/API.md, Chat turns: the `data:` of each event of `/completions/stream`, its `type` the same as the
 * `event:` line's. The stream is start → sources (when context was used) → delta… → done | error.
 */
export const ChatStreamEvent = Type.Union(
  [
    Type.Object({ type: Type.Literal('start'), threadId: Uuid, messageId: Uuid, modelId: Uuid }),
    Type.Object({ type: Type.Literal('sources'), sources: Type.Array(SourceSchema) }),
    Type.Object({ type: Type.Literal('delta'), content: Type.String() }),
    Type.Object({ type: Type.Literal('tool_call'), id: Type.String(), name: Type.String(), arguments: Type.String() }),
    Type.Object({ type: Type.Literal('tool_result'), id: Type.String(), ok: Type.Boolean(), content: Type.String() }),
    Type.Object({ type: Type.Literal('image'), id: Uuid, mimeType: Type.String(), width: Type.Integer(), height: Type.Integer() }),
    Type.Object({ type: Type.Literal('done'), finishReason: Type.String(), usage: UsageSchema }),
    Type.Object({ type: Type.Literal('error'), status: Type.Integer(), code: Type.String(), detail: Type.String() }),
  ],
  { $id: 'ChatStreamEvent' },
);
export type ChatStreamEventT = Static<typeof ChatStreamEvent>;

/** What the OpenAPI document says of the event stream, beside the ChatStreamEvent schema of each event's data. */
export const CHAT_STREAM_DESCRIPTION = [
  'Server-sent events (text/event-stream). Each event is an `event: <type>` line, an `id:` line',
  '(its sequence number in the stream) and a `data:` line holding one ChatStreamEvent as JSON with',
  'the same `type`, then a blank line. The first event also carries a `retry:` line; `: ping` heartbeat',
  'comment lines may come between events, which clients ignore. Order: `start` → `sources` (when context was',
  'used) → zero or more `delta` → (an image model) one `image` per image made → `done`, or `error` in place of `done`; the',
  'stream ends after either. In a workspace with MCP servers, `tool_call` (a tool the turn calls) and `tool_result` (what it',
  'answered) come between the deltas.',
].join(' ');

/** The seed sends a ChatThread_Full to rename; only `title` is read. */
export const UpdateThreadBody = Type.Object(
  {
    title: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
    pinned: Type.Optional(Type.Boolean({ description: "true: the team's retention never deletes this thread" })),
  },
  { minProperties: 1 },
);
export const RenameThreadBody = Type.Object({ title: Type.String({ minLength: 1, maxLength: 500 }) }, { additionalProperties: true });

/** POST …/history/{threadId}/active */
export const ActiveVersionBody = Type.Object(
  { messageId: Type.String({ format: 'uuid', description: 'a message of the thread: its path (to its newest descendants) becomes the active one' }) },
  { additionalProperties: false },
);

export const Prompt = Type.Object({ content: Type.String() });
export const SamplePromptsQuery = Type.Object({ limit: Type.Integer({ minimum: 1, maximum: 50, default: 6, description: 'at most this many' }) });

const Span = Type.Array(Type.Integer({ minimum: 0 }), { minItems: 2, maxItems: 2, description: '[start, end): offsets in the text (UTF-16 code units)' });

export const ChatSearchQuery = Type.Object({
  q: Type.String({
    minLength: 1,
    maxLength: 200,
    description: 'words to find in message texts and thread titles; the last one also matches as a prefix unless followed by a space',
  }),
  workspaceId: Type.Optional(Uuid),
  page: Int32({ maximum: 1_000_000, default: 0, description: '0-based page number' }),
  size: Type.Integer({ minimum: 1, maximum: 1000, default: 20, description: 'page size' }),
});
export type ChatSearchQueryT = Static<typeof ChatSearchQuery>;

export const ChatSearchHit = Type.Object(
  {
    threadId: Uuid,
    workspaceId: Uuid,
    messageId: Type.String({ format: 'uuid', description: 'the best matching message; for a thread found by its title alone, its first message' }),
    title: Type.String(),
    snippet: Type.String({ description: 'plain text of the message around the match' }),
    highlights: Type.Array(Span, { description: 'the matched words in snippet' }),
    titleHighlights: Type.Array(Span, { description: 'the matched words in title' }),
    created: DateTime,
  },
  { $id: 'ChatSearchHit' },
);
export type ChatSearchHitT = Static<typeof ChatSearchHit>;

/** GET …/history/{threadId}/export */
export const ThreadExportQuery = Type.Object({
  format: Type.Union([Type.Literal('md'), Type.Literal('json')], {
    default: 'md',
    description: 'md (the default): a Markdown document; json: ChatThreadExport',
  }),
});

/** The JSON export of a thread: its metadata and every message, oldest first. */
export const ChatThreadExport = Type.Object(
  {
    id: Uuid,
    workspaceId: Uuid,
    title: Type.String(),
    created: DateTime,
    updated: DateTime,
    messages: Type.Array(
      Type.Object({
        id: Uuid,
        role: Role,
        content: Type.String(),
        modelId: Nullable(Uuid),
        modelName: Nullable(Type.String({ description: "the model's name now (null: no model, or it was deleted)" })),
        status: Type.Union([Type.Literal('ok'), Type.Literal('error'), Type.Literal('interrupted')]),
        error: Nullable(Type.Object({ status: Type.Integer(), code: Type.String(), detail: Type.String() })),
        sources: Type.Array(Type.Object({ filename: Nullable(Type.String()), excerpt: Type.String(), plusId: Uuid, fileId: Nullable(Uuid) })),
        created: DateTime,
      }),
    ),
  },
  { $id: 'ChatThreadExport' },
);

/** POST/GET …/history/{threadId}/share */
export const ChatShare = Type.Object(
  {
    url: Type.String({ description: 'the read-only page, opened without signing in' }),
    token: Type.String({ description: "the link's secret (the last part of url)" }),
    created: DateTime,
  },
  { $id: 'ChatShare' },
);

export const ShareTokenParams = Type.Object({ token: Type.String({ minLength: 1, maxLength: 200 }) });

/** GET /share/{token}: a thread as it was shared, for anyone with the link. */
export const SharedThread = Type.Object(
  {
    title: Type.String(),
    created: Type.String({ format: 'date-time', description: 'when it was shared' }),
    messages: Type.Array(
      Type.Object({
        id: Uuid,
        role: Role,
        content: Type.String(),
        modelName: Nullable(Type.String()),
        status: Type.Union([Type.Literal('ok'), Type.Literal('error'), Type.Literal('interrupted')]),
        sources: Type.Array(
          Type.Object({
            filename: Nullable(Type.String({ description: 'null: a source from an entry not every member of the team reads (not shown)' })),
          }),
          { description: "the answer's sources in order (its [n] citations), by file name only" },
        ),
        created: DateTime,
      }),
      { description: 'oldest first' },
    ),
  },
  { $id: 'SharedThread' },
);

/** GET/PUT /chat/sharing: whether the team's threads may be shared by link. */
export const ChatSharing = Type.Object({ enabled: Type.Boolean() }, { additionalProperties: false, $id: 'ChatSharing' });

const PromptTitle = Type.String({ minLength: 1, maxLength: 200, pattern: '\\S' });
const PromptContent = Type.String({ minLength: 1, maxLength: 20_000, pattern: '\\S', description: 'the text; `{{name}}` marks a variable filled in on use' });

/** The prompt library: a saved prompt. */
export const SavedPrompt = Type.Object(
  {
    id: Uuid,
    scope: Type.Union([Type.Literal('team'), Type.Literal('personal')], { description: 'team: every member sees it; personal: its creator only' }),
    title: Type.String(),
    content: Type.String(),
    variables: Type.Array(Type.String(), { description: 'the names inside {{…}} in content, in order of first use' }),
    userId: Type.Integer({ description: 'who saved it' }),
    created: DateTime,
    updated: DateTime,
  },
  { $id: 'SavedPrompt' },
);
export const SavedPromptBody = Type.Object(
  { title: PromptTitle, content: PromptContent, scope: Type.Optional(Type.Union([Type.Literal('team'), Type.Literal('personal')], { default: 'personal' })) },
  { additionalProperties: false },
);
export const SavedPromptPatch = Type.Object({ title: Type.Optional(PromptTitle), content: Type.Optional(PromptContent) }, { additionalProperties: false });
