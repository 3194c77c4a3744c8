import { Type, type Static } from 'typebox';
import { DateTime, Nullable, Uuid } from '../../http/schemas.js';

export const EmbeddingStatusT = Type.Union([Type.Literal('pending'), Type.Literal('embedding'), Type.Literal('ready'), Type.Literal('failed')]);

/** A file's embedding with its team's embedding model (shown on each file of a Plus entry). */
export const FileEmbedding = Type.Object({
  status: EmbeddingStatusT,
  error: Nullable(Type.String({ description: 'why the last attempt failed (a stable code, then a message); retried with backoff' })),
  attempts: Type.Integer({ description: 'attempts with the current model' }),
  updated: DateTime,
});
export type FileEmbeddingT = Static<typeof FileEmbedding>;

export const EmbeddingSettings = Type.Object({
  embeddingModelId: Nullable(Uuid),
  modelName: Nullable(Type.String()),
  dimensions: Nullable(Type.Integer({ description: 'size of the stored vectors (or the configured size before the first)' })),
  files: Type.Object(
    { pending: Type.Integer(), embedding: Type.Integer(), ready: Type.Integer(), failed: Type.Integer() },
    { description: "the team's files by embedding status" },
  ),
  updated: Nullable(DateTime),
});
export type EmbeddingSettingsT = Static<typeof EmbeddingSettings>;

export const EmbeddingSettingsBody = Type.Object(
  {
    embeddingModelId: Nullable(
      Type.String({
        format: 'uuid',
        description:
          'a model of kind embedding the team uses; null: none (retrieval is full-text only). Choosing a model, even the current one, re-embeds every file',
      }),
    ),
  },
  { additionalProperties: false },
);

export const RerankSettings = Type.Object({
  rerankModelId: Nullable(Uuid),
  modelName: Nullable(Type.String()),
  candidates: Type.Integer({ description: 'how many of retrieval’s best candidates the rerank model orders (the rest follow unchanged)' }),
  updated: Nullable(DateTime),
});
export type RerankSettingsT = Static<typeof RerankSettings>;

export const RerankSettingsBody = Type.Object(
  {
    rerankModelId: Nullable(
      Type.String({
        format: 'uuid',
        description: 'a model of kind rerank the team uses; null: none (retrieval’s own order)',
      }),
    ),
  },
  { additionalProperties: false },
);
