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
  ocr: Type.Boolean({ description: 'the text was read by OCR: an image, or a PDF with pages that have no text layer (docs/API.md, Scans)' }),
  threadId: Nullable(Uuid),
  embedding: Nullable({
    ...FileEmbedding,
    description: "the file's embedding with the team's embedding model; null: the team has none (full-text search only)",
  }),
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

export const PlusReading = Type.Object({
  files: Type.Array(
    Type.Object({
      filename: Type.String(),
      pages: Type.Integer({ description: 'pages of the file (1 for an image)' }),
      pagesRead: Type.Integer({ description: 'pages read so far (by OCR or from their text layer)' }),
    }),
    { description: 'files of uploads to this entry being read by OCR now, on the node answering (docs/API.md, Scans)' },
  ),
});

export const PlusSummary = Type.Object(
  { id: Uuid, title: Nullable(Type.String()), description: Nullable(Type.String()), isPublic: Type.Boolean() },
  { $id: 'PlusSummary' },
);

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
  Type.Array(Type.String({ format: 'binary' }), {
    minItems,
    description: 'files (text, Markdown, CSV, JSON, HTML, PDF, DOCX; PNG, JPEG, TIFF and WebP scans)',
  });

/** The multipart/form-data body of create-or-update, for the OpenAPI document. */
export const PlusForm = Type.Object({ ...PlusFormFields.properties, files: Type.Optional(FileParts(0)) }, { 'x-multipart': true });
export const FilesForm = Type.Object({ files: FileParts(1) }, { 'x-multipart': true });

export const ShowPublicQuery = Type.Object({ showPublic: Type.Boolean({ default: true, description: "false: only the caller's own entries" }) });
export const ContextForPromptBody = Type.Object(
  {
    content: Type.String({ minLength: 1, maxLength: 100_000 }),
    maxTokens: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
    explain: Type.Optional(
      Type.Boolean({
        default: false,
        description: 'also return the ranked candidate chunks with their scores and the terms searched for (docs/API.md, Ranking)',
      }),
    ),
  },
  { additionalProperties: false },
);

// ---- ranking transparency ----------------------------------------------------

/** A chunk's place in one ranked list. */
export const RankInSchema = Type.Object({
  score: Type.Number({ description: 'score in this ranked list (higher is better)' }),
  rank: Type.Integer({ minimum: 1, description: '1-based place in this ranked list' }),
});

/** Where a chunk stood in each ranked list its final place came from (chat sources, explain). */
export const RankingSchema = Type.Object(
  {
    lexical: Type.Union([RankInSchema, Type.Null()], { description: 'full-text (BM25) ranking; null when full-text search did not find the chunk' }),
    vector: Type.Union([RankInSchema, Type.Null()], {
      description: 'vector (embedding) ranking; null without an embedding model, or when it did not find the chunk',
    }),
    rerank: Type.Optional(
      Type.Union([RankInSchema, Type.Null()], {
        description: "the team's rerank model's order of the best candidates (score: its relevance); absent or null without one, or beyond them",
      }),
    ),
  },
  { description: 'where the chunk stood in each ranked list' },
);

export const ExplainTerm = Type.Object({
  lexeme: Type.String({ description: 'the word as searched (English stem)' }),
  df: Type.Integer({ description: 'chunks of the entry containing it' }),
  idf: Type.Number({ description: 'its weight (BM25 inverse document frequency)' }),
  carried: Type.Boolean({ description: 'carried from the previous question of a thread' }),
});

export const ExplainResult = Type.Object({
  rank: Type.Integer({ minimum: 1 }),
  score: Type.Number({ description: 'final score (what orders the list)' }),
  ranking: RankingSchema,
  chunkId: Type.Integer(),
  fileId: Uuid,
  filename: Type.String(),
  heading: Nullable(Type.String()),
  tokenSize: Type.Integer(),
  used: Type.Boolean({ description: 'the chunk is in `content` (it fitted the token budget)' }),
  excerpt: Type.String(),
});

export const ContextForPromptResponse = Type.Object({
  content: Type.String(),
  explain: Type.Optional(
    Type.Object({
      method: Type.String({
        description:
          'how the list was ranked: "lexical", "hybrid" (full-text and vector rankings fused by reciprocal rank: the team has an embedding model), "leading" (no word of the question in the entry: its opening chunks) or "none"',
      }),
      terms: Type.Array(ExplainTerm),
      results: Type.Array(ExplainResult),
    }),
  ),
});
export const ChatAddFileQuery = Type.Object({
  collection: Type.Optional(
    Type.String({
      maxLength: 200,
      description: 'Accepted for compatibility with the interface seed and ignored: the Plus entry in the path is the collection',
    }),
  ),
  threadId: Type.Optional(Uuid),
  models: Type.Optional(Type.Array(Uuid, { maxItems: 20 })),
  summarize: Type.Boolean({ default: false, description: 'also store a model-written summary of each file, using the first of models' }),
});

// ---- evaluation set --------------------------------------------------------------------

const NonBlank = (maxLength: number, description: string) => Type.String({ minLength: 1, maxLength, pattern: '\\S', description });

/** A question of an entry's evaluation set as written (add, edit, replace the set). */
export const EvalQuestionInput = Type.Object(
  {
    question: NonBlank(2_000, 'a question people would ask of these documents'),
    passage: NonBlank(
      4_000,
      "text the answering chunk must contain, quoted from the documents (spacing and letter case do not matter); keep it short: a passage cut by a chunk's end is never found",
    ),
  },
  { additionalProperties: false },
);

export const EvalQuestion = Type.Object({
  id: Uuid,
  question: Type.String(),
  passage: Type.String(),
  created: DateTime,
  updated: DateTime,
});

export const EvalSetBody = Type.Object(
  { questions: Type.Array(EvalQuestionInput, { maxItems: 100, description: 'the whole set, in order (at most 100 questions)' }) },
  { additionalProperties: false },
);

export const EvalQuestionParams = Type.Object({ plusId: Uuid, questionId: Uuid });

export const EvalQuestionResult = Type.Object({
  questionId: Uuid,
  question: Type.String({ description: 'the question as it was run' }),
  passage: Type.String({ description: 'its passage as it was run' }),
  rank: Nullable(
    Type.Integer({ minimum: 1, maximum: 10, description: 'where the first chunk holding the passage came (1 is first); null: not in the top 10' }),
  ),
  matchingChunks: Type.Integer({
    minimum: 0,
    description: 'chunks of the entry holding the passage; 0: the documents no longer contain it (edit the passage)',
  }),
  recallAt5: Type.Number({ description: '1 when the passage came in the top 5, else 0' }),
  reciprocalRankAt10: Type.Number({ description: '1 / rank within the top 10, else 0' }),
  ndcgAt10: Type.Number({ description: 'the chunks holding the passage in the top 10, weighed by place, against the best possible order' }),
});

export const EvalRun = Type.Object({
  ran: DateTime,
  userId: Type.Integer({ description: 'who ran it' }),
  method: Type.Union([Type.Literal('lexical'), Type.Literal('hybrid')], {
    description:
      'how the entry was searched: "hybrid" (full text and vectors fused: the team has an embedding model and the chunks are embedded) or "lexical" (full text)',
  }),
  questions: Type.Integer({ minimum: 1 }),
  foundInTop5: Type.Integer({ minimum: 0, description: 'questions whose passage came in the top 5' }),
  recallAt5: Type.Number({ description: 'share of questions whose passage came in the top 5' }),
  mrrAt10: Type.Number({ description: 'mean reciprocal rank at 10' }),
  ndcgAt10: Type.Number({ description: 'mean nDCG at 10' }),
  results: Type.Array(EvalQuestionResult),
});

export const Evaluation = Type.Object({
  questions: Type.Array(EvalQuestion),
  lastRun: Nullable({ ...EvalRun, description: 'the last run of the set (figures as they were then); null: never run' }),
  canEdit: Type.Boolean({ description: 'the caller may change the set and run it (the creator of the entry, or a team owner/admin)' }),
});
