import { Type } from 'typebox';
import { DateTime, Nullable, Uuid } from '../../http/schemas.js';
import { FileEmbedding } from '../embeddings/schema.js';

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
  embedding: Nullable({ ...FileEmbedding, description: "the file's embedding with the team's embedding model; null: the team has none (full-text search only)" }),
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

/**
 * The text fields of the create-or-update form. Multipart parts are read as a stream (http/multipart.ts)
 * and these fields are then checked against this schema (http/validation.ts formValidator), so its
 * limits are the ones the server applies and the document shows. Unknown fields are ignored.
 */
export const PlusFormFields = Type.Object({
  id: Type.Optional(Type.String({ format: 'uuid', description: 'an existing entry to update (files are added to it); absent or empty: a new entry' })),
  context: Type.Optional(Type.String({ maxLength: 200_000 })),
  title: Type.Optional(Type.String({ maxLength: 2_000 })),
  description: Type.Optional(Type.String({ maxLength: 2_000 })),
  isPublic: Type.Optional(Type.Boolean({ description: 'true or false' })),
});
const FileParts = (minItems: number) =>
  Type.Array(Type.String({ format: 'binary' }), { minItems, description: 'files (text, Markdown, CSV, JSON, HTML, PDF, DOCX)' });

/** The multipart/form-data body of create-or-update, for the OpenAPI document. */
export const PlusForm = Type.Object({ ...PlusFormFields.properties, files: Type.Optional(FileParts(0)) }, { 'x-multipart': true });
export const FilesForm = Type.Object({ files: FileParts(1) }, { 'x-multipart': true });

export const ShowPublicQuery = Type.Object({ showPublic: Type.Boolean({ default: true, description: "false: only the caller's own entries" }) });
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
  summarize: Type.Boolean({ default: false, description: 'also store a model-written summary of each file, using the first of models' }),
});
