import { Type, type Static } from 'typebox';
import { DateTime, Int32, Nullable, Uuid } from '../../http/schemas.js';

export const PromptLog = Type.Object(
  {
    id: Uuid,
    created: DateTime,
    userId: Type.Integer(),
    workspaceId: Nullable(Uuid),
    threadId: Nullable(Uuid),
    modelId: Nullable(Uuid),
    modelName: Nullable(Type.String()),
    prompt: Type.String(),
    response: Nullable(Type.String()),
    promptTokens: Nullable(Type.Integer()),
    completionTokens: Nullable(Type.Integer()),
    latencyMs: Nullable(Type.Integer()),
    status: Type.String({ description: 'pending | ok | error | interrupted' }),
    error: Nullable(Type.String()),
    rewrite: Nullable(
      Type.Object(
        {
          query: Type.String({ description: 'what was searched instead of the follow-up question' }),
          promptTokens: Type.Integer(),
          completionTokens: Type.Integer(),
        },
        {
          description:
            "a follow-up searched as rewritten by the turn's model (workspace followUpSearch: rewrite): the query and the tokens of that call, which are also counted in the turn's usage ledger row; null otherwise",
        },
      ),
    ),
  },
  { $id: 'PromptLog' },
);
export type PromptLogT = Static<typeof PromptLog>;

export const PromptLogRangeQuery = Type.Object({
  q: Type.Optional(Type.String({ maxLength: 500 })),
  startDate: DateTime,
  endDate: DateTime,
});
export const PromptLogPagedQuery = Type.Object({
  q: Type.Optional(Type.String({ maxLength: 500 })),
  startDate: Type.Optional(DateTime),
  endDate: Type.Optional(DateTime),
  // page × size stays within what an SQL OFFSET and a JavaScript number hold exactly.
  page: Int32({ maximum: 1_000_000, default: 0, description: '0-based page number' }),
  size: Type.Integer({ minimum: 1, maximum: 1000, default: 20, description: 'page size' }),
  sort: Type.Optional(Type.Array(Type.String({ pattern: '^[A-Za-z]+(,(asc|desc|ASC|DESC))?$' }), { maxItems: 5 })),
});
