import { Type, type Static } from 'typebox';
import { DateTime, Int32, Nullable, Uuid } from '../../http/schemas.js';

/** The seed's neutral enum words are accepted as aliases and normalised by the service. */
export const ApiBaseIn = Type.Union(
  ['OPENAI', 'ANTHROPIC', 'GOOGLE', 'VENDOR_A', 'VENDOR_B', 'VENDOR_C'].map((v) => Type.Literal(v)),
  { description: 'OPENAI | ANTHROPIC | GOOGLE (aliases VENDOR_A | VENDOR_B | VENDOR_C)' },
);
export const ConnectionTypeIn = Type.Union(
  ['URL', 'AZURE', 'CLOUD_PROVIDER_A'].map((v) => Type.Literal(v)),
  {
    description: 'URL | AZURE (alias CLOUD_PROVIDER_A)',
  },
);

export const ModelSetting = Type.Object(
  { fieldName: Type.String({ maxLength: 200 }), name: Type.String({ maxLength: 200 }), description: Type.String({ maxLength: 5000 }) },
  { additionalProperties: false },
);
export const PromptWrapper = Type.Object(
  { wrapperName: Type.String({ maxLength: 200 }), value: Type.String({ maxLength: 20_000 }) },
  { additionalProperties: false },
);

const Text = (max = 500) => Nullable(Type.String({ maxLength: max }));

/**
 * The one list of a model's own settings: each has the same name and shape in a request (where
 * it is optional), in an answer (where it is always present) and as a column of `models`; the
 * service copies them by this list. Integer maxima are the columns' ranges.
 */
export const ModelSettingFields = {
  icon: Text(100_000),
  baseModel: Text(200),
  paramCount: Nullable(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })),
  computeType: Text(),
  architecture: Text(),
  format: Text(),
  engine: Text(),
  bitCount: Nullable(Type.Integer({ minimum: 1, maximum: 64 })),
  groupSize: Nullable(Int32()),
  contextWindow: Nullable(Type.Integer({ minimum: 1, maximum: 100_000_000, description: "tokens the model takes in; bounds a workspace's maxTokens" })),
  promptMode: Text(),
  accuracy: Nullable(Type.Number()),
  speed: Nullable(Type.Number()),
  weight: Nullable(Type.Number()),
  specialized: Type.Boolean(),
  active: Type.Boolean(),
  // Model fields the seed does not list in ModelRequest but a model needs to be set somewhere.
  chatCredits: Type.Integer({ minimum: 0, maximum: 1_000_000, description: 'credits per 1,000 tokens; 0 is free' }),
  internalUseOnly: Type.Boolean(),
  usesSystemPrompts: Type.Boolean(),
  imageGen: Type.Boolean(),
  hasVision: Type.Boolean(),
  instructionFollowing: Type.Boolean(),
  promptWrapper: Nullable(PromptWrapper),
  modelRating: Nullable(Type.Integer({ minimum: 0, maximum: 100 })),
  kind: Type.Union([Type.Literal('chat'), Type.Literal('embedding'), Type.Literal('rerank')], {
    description:
      "chat: answers in workspaces; embedding: turns text into vectors for a team's Plus entries (team embedding setting); rerank: orders retrieval's best passages by relevance (team rerank setting; an OPENAI model with a URL serving POST {url}/rerank). Default chat",
  }),
  embeddingDimensions: Nullable(
    Type.Integer({ minimum: 1, maximum: 16_000, description: "embedding models: the vector size to ask for; null: the model's own, found on first use" }),
  ),
};
export type ModelSettingKey = keyof typeof ModelSettingFields;
export const MODEL_SETTING_KEYS = Object.keys(ModelSettingFields) as ModelSettingKey[];

const requestFields = {
  id: Type.Optional(Uuid),
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  apiKey: Type.Optional(Nullable(Type.String({ maxLength: 4096, description: 'stored encrypted; answers show only a mask' }))),
  url: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 2048 }))),
  connectionType: Type.Optional(ConnectionTypeIn),
  apiBase: Type.Optional(ApiBaseIn),
  settingsAvailable: Type.Optional(Nullable(Type.Array(ModelSetting, { maxItems: 100 }))),
  ...Type.Partial(Type.Object(ModelSettingFields)).properties,
};

/** PATCH: every field optional. */
export const ModelRequest = Type.Object(requestFields, { additionalProperties: false });
export type ModelRequestT = Static<typeof ModelRequest>;
/** POST: the same fields, `name` required. */
export const NewModelRequest = Type.Object({ ...requestFields, name: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false });

export const Model = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    apiKey: Nullable(Type.String({ description: 'never the key: a mask such as ••••abcd, or null' })),
    url: Nullable(Type.String()),
    connectionType: Type.Union([Type.Literal('URL'), Type.Literal('AZURE')]),
    apiBase: Type.Union([Type.Literal('OPENAI'), Type.Literal('ANTHROPIC'), Type.Literal('GOOGLE')]),
    ...ModelSettingFields,
    settingsAvailable: Type.Array(ModelSetting),
    created: DateTime,
    updated: DateTime,
    system: Type.Boolean({ description: 'a system model defined by the instance operator' }),
    inTeam: Type.Boolean({ description: "whether the caller's team uses this model" }),
    contextWindowUsed: Type.Integer({ description: 'the window turns are fitted into: contextWindow, else the one the provider reported, else 8192' }),
    contextWindowSource: Type.Union([Type.Literal('declared'), Type.Literal('probed'), Type.Literal('default')], {
      description: "where contextWindowUsed comes from: the model's contextWindow, the provider (asked when the model was saved without one), or the default",
    }),
    contextWindowProbe: Nullable(Type.String({ description: 'when probed: what the provider reported it in, e.g. `llama.cpp /props n_ctx`' })),
    warnings: Type.Optional(
      Type.Array(Type.String(), {
        description: 'create/update only: configuration doubts found by asking the provider (e.g. a contextWindow larger than it serves); never blocking',
      }),
    ),
  },
  { $id: 'Model' },
);
export type ModelT = Static<typeof Model>;

/** add-to-team / remove-from-team take a Model; only its id matters. */
export const ModelRef = Type.Object({ id: Uuid }, { additionalProperties: true });

export const ModelListQuery = Type.Object({
  includeSystem: Type.Boolean({ default: false, description: 'also list the system models the team has not added' }),
  modelRating: Type.Optional(Type.Integer({ minimum: 0, maximum: 100, description: 'only models rated at least this' })),
});
export const ModelIds = Type.Array(Uuid, { maxItems: 1000 });
export const CreateModelQuery = Type.Object({ system: Type.Boolean({ default: false, description: 'create a system model (instance admin only)' }) });

/** POST /models/{modelId}/test (web app): one short prompt sent to the provider. */
export const CONNECTION_TEST_PROMPT = 'Reply with one short sentence to confirm you can read this.';
export const ConnectionTestBody = Type.Object(
  // optional with a default: a client may leave it out, and the document must say so
  { prompt: Type.Optional(Type.String({ minLength: 1, maxLength: 2000, default: CONNECTION_TEST_PROMPT })) },
  { additionalProperties: false },
);
export const ConnectionTest = Type.Object({
  ok: Type.Boolean({ description: 'whether the provider answered' }),
  content: Nullable(Type.String({ description: "the provider's answer (ok only)" })),
  finishReason: Nullable(Type.String()),
  dimensions: Nullable(
    Type.Integer({ description: 'embedding models: the size of the vector the embeddings endpoint answered for the prompt; chat models: null' }),
  ),
  latencyMs: Type.Integer({ description: 'time the test took, in milliseconds' }),
  error: Nullable(
    Type.Object({
      status: Type.Integer({ description: 'the status a chat call would have answered (400 configuration, 502 provider, 504 timeout, 429 rate limited)' }),
      code: Type.String(),
      detail: Type.String({ description: 'what went wrong, with the upstream status and code when there are some' }),
    }),
  ),
});
export type ConnectionTestT = Static<typeof ConnectionTest>;
