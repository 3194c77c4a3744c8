import { Type, type Static } from 'typebox';
import { DateTime, Nullable, Uuid } from '../../http/schemas.js';

/** The seed's neutral enum words are accepted as aliases and normalised by the service. */
export const ApiBaseIn = Type.Union(
  ['OPENAI', 'ANTHROPIC', 'GOOGLE', 'VENDOR_A', 'VENDOR_B', 'VENDOR_C'].map((v) => Type.Literal(v)),
  { description: 'OPENAI | ANTHROPIC | GOOGLE (aliases VENDOR_A | VENDOR_B | VENDOR_C)' },
);
export const ConnectionTypeIn = Type.Union(['URL', 'AZURE', 'CLOUD_PROVIDER_A'].map((v) => Type.Literal(v)), {
  description: 'URL | AZURE (alias CLOUD_PROVIDER_A)',
});

export const ModelSetting = Type.Object(
  { fieldName: Type.String({ maxLength: 200 }), name: Type.String({ maxLength: 200 }), description: Type.String({ maxLength: 5000 }) },
  { additionalProperties: false },
);
export const PromptWrapper = Type.Object(
  { wrapperName: Type.String({ maxLength: 200 }), value: Type.String({ maxLength: 20_000 }) },
  { additionalProperties: false },
);

const Text = (max = 500) => Nullable(Type.String({ maxLength: max }));
const Int = (min = 0) => Nullable(Type.Integer({ minimum: min, maximum: 2 ** 53 - 1 }));

export const ModelRequest = Type.Object(
  {
    id: Type.Optional(Uuid),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    apiKey: Type.Optional(Nullable(Type.String({ maxLength: 4096 }))),
    url: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 2048 }))),
    connectionType: Type.Optional(ConnectionTypeIn),
    apiBase: Type.Optional(ApiBaseIn),
    icon: Type.Optional(Text(100_000)),
    baseModel: Type.Optional(Text(200)),
    paramCount: Type.Optional(Int()),
    computeType: Type.Optional(Text()),
    architecture: Type.Optional(Text()),
    format: Type.Optional(Text()),
    engine: Type.Optional(Text()),
    bitCount: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 64 }))),
    groupSize: Type.Optional(Int()),
    contextWindow: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 100_000_000 }))),
    promptMode: Type.Optional(Text()),
    accuracy: Type.Optional(Nullable(Type.Number())),
    speed: Type.Optional(Nullable(Type.Number())),
    weight: Type.Optional(Nullable(Type.Number())),
    specialized: Type.Optional(Type.Boolean()),
    active: Type.Optional(Type.Boolean()),
    // Model fields the seed does not list in ModelRequest but a model needs to be set somewhere.
    chatCredits: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })),
    internalUseOnly: Type.Optional(Type.Boolean()),
    usesSystemPrompts: Type.Optional(Type.Boolean()),
    imageGen: Type.Optional(Type.Boolean()),
    hasVision: Type.Optional(Type.Boolean()),
    instructionFollowing: Type.Optional(Type.Boolean()),
    settingsAvailable: Type.Optional(Nullable(Type.Array(ModelSetting, { maxItems: 100 }))),
    promptWrapper: Type.Optional(Nullable(PromptWrapper)),
    modelRating: Type.Optional(Nullable(Type.Integer({ minimum: 0, maximum: 100 }))),
  },
  { additionalProperties: false },
);
export type ModelRequestT = Static<typeof ModelRequest>;

export const Model = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    apiKey: Nullable(Type.String({ description: 'never the key: a mask such as ••••abcd, or null' })),
    url: Nullable(Type.String()),
    connectionType: Type.String(),
    apiBase: Type.String(),
    icon: Nullable(Type.String()),
    baseModel: Nullable(Type.String()),
    paramCount: Nullable(Type.Integer()),
    computeType: Nullable(Type.String()),
    architecture: Nullable(Type.String()),
    format: Nullable(Type.String()),
    engine: Nullable(Type.String()),
    bitCount: Nullable(Type.Integer()),
    groupSize: Nullable(Type.Integer()),
    contextWindow: Nullable(Type.Integer()),
    promptMode: Nullable(Type.String()),
    accuracy: Nullable(Type.Number()),
    speed: Nullable(Type.Number()),
    weight: Nullable(Type.Number()),
    specialized: Type.Boolean(),
    active: Type.Boolean(),
    chatCredits: Type.Integer(),
    internalUseOnly: Type.Boolean(),
    created: DateTime,
    updated: DateTime,
    usesSystemPrompts: Type.Boolean(),
    imageGen: Type.Boolean(),
    hasVision: Type.Boolean(),
    settingsAvailable: Type.Array(ModelSetting),
    instructionFollowing: Type.Boolean(),
    promptWrapper: Nullable(PromptWrapper),
    modelRating: Nullable(Type.Integer()),
    system: Type.Boolean({ description: 'a system model defined by the instance operator' }),
    inTeam: Type.Boolean({ description: "whether the caller's team uses this model" }),
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
  includeSystem: Type.Boolean({ default: false }),
  modelRating: Type.Optional(Type.Integer({ minimum: 0, description: 'only models rated at least this' })),
});
export const ModelIds = Type.Array(Uuid, { maxItems: 1000 });
export const CreateModelQuery = Type.Object({ system: Type.Boolean({ default: false }) });
