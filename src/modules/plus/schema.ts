import { Type } from 'typebox';
import { DateTime, Nullable, Uuid } from '../../http/schemas.js';

export const PlusFileChunk = Type.Object({
  id: Type.Integer(),
  fileData: Type.String(),
  fileDataProcessed: Type.String(),
  tokenSize: Type.Integer(),
});

export const PlusFile = Type.Object({
  id: Uuid,
  filename: Type.String(),
  mimeType: Type.String(),
  fileChunks: Type.Array(PlusFileChunk),
  tokenSize: Type.Integer(),
  bytes: Type.Integer(),
  created: DateTime,
  summary: Nullable(Type.String({ description: 'a model-written summary, when the file was added with summarize=true' })),
  threadId: Nullable(Uuid),
});

export const Plus = Type.Object(
  {
    id: Uuid,
    context: Nullable(Type.String()),
    title: Nullable(Type.String()),
    description: Nullable(Type.String()),
    isPublic: Type.Boolean(),
    created: DateTime,
    userId: Type.Integer(),
    files: Type.Array(PlusFile),
  },
  { $id: 'Plus' },
);

export const PlusSummary = Type.Object({ id: Uuid, title: Nullable(Type.String()), description: Nullable(Type.String()), isPublic: Type.Boolean() }, { $id: 'PlusSummary' });

/** The multipart form of create-or-update, for the OpenAPI document (parts are read as a stream). */
export const PlusForm = Type.Object(
  {
    id: Type.Optional(Uuid),
    context: Type.Optional(Type.String()),
    title: Type.Optional(Type.String()),
    description: Type.Optional(Type.String()),
    isPublic: Type.Optional(Type.Boolean()),
    files: Type.Optional(Type.Array(Type.String({ format: 'binary' }))),
  },
  { 'x-multipart': true },
);
export const FilesForm = Type.Object({ files: Type.Array(Type.String({ format: 'binary' })) }, { 'x-multipart': true });

export const ShowPublicQuery = Type.Object({ showPublic: Type.Boolean({ default: true }) });
export const ContextForPromptBody = Type.Object(
  { content: Type.String({ minLength: 1, maxLength: 100_000 }), maxTokens: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })) },
  { additionalProperties: false },
);
export const ChatAddFileQuery = Type.Object({
  collection: Type.Optional(
    Type.String({ maxLength: 200, description: 'Accepted for compatibility with the interface seed and ignored: the Plus entry in the path is the collection' }),
  ),
  threadId: Type.Optional(Uuid),
  models: Type.Optional(Type.Array(Uuid, { maxItems: 20 })),
  summarize: Type.Boolean({ default: false }),
});
