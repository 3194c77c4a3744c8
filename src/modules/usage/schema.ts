import { Type, type Static } from 'typebox';
import { DateTime, INT32_MAX, Nullable, Uuid } from '../../http/schemas.js';

const Scope = Type.Union([Type.Literal('team'), Type.Literal('user'), Type.Literal('apiKey')], { description: 'what the budget limits' });
const Period = Type.Union([Type.Literal('day'), Type.Literal('month'), Type.Literal('total')], { description: 'calendar period in UTC; total never resets' });
const Credits = Type.Number({ minimum: 0, maximum: 1e12, description: 'credits per period' });
const Rpm = Type.Integer({ minimum: 1, maximum: INT32_MAX, description: 'requests per calendar minute' });

export const CreateBudgetBody = Type.Object(
  {
    scope: Scope,
    scopeId: Type.Union([Type.String({ minLength: 1, maxLength: 64 }), Type.Integer({ minimum: 1, maximum: INT32_MAX })], {
      description: 'the team id (team), the user id (user) or the API key id (apiKey)',
    }),
    period: Period,
    credits: Type.Optional(Nullable(Credits)),
    requestsPerMinute: Type.Optional(Nullable(Rpm)),
  },
  { additionalProperties: false },
);
export type CreateBudgetBodyT = Static<typeof CreateBudgetBody>;

export const UpdateBudgetBody = Type.Object(
  {
    credits: Type.Optional(Nullable(Credits)),
    requestsPerMinute: Type.Optional(Nullable(Rpm)),
  },
  { additionalProperties: false, description: 'a field left out keeps its value; null removes that limit (one must remain)' },
);
export type UpdateBudgetBodyT = Static<typeof UpdateBudgetBody>;

export const Budget = Type.Object(
  {
    id: Uuid,
    scope: Scope,
    scopeId: Type.String(),
    period: Period,
    credits: Nullable(Type.Number()),
    requestsPerMinute: Nullable(Type.Integer()),
    /** settled spend plus reservations in flight, in the current period */
    spent: Type.Number({ description: 'credits spent (and reserved by calls in flight) in the current period' }),
    remaining: Nullable(Type.Number({ description: 'credits left in the current period; null without a credit limit' })),
    periodStart: DateTime,
    resetsAt: Nullable(DateTime),
    created: DateTime,
  },
  { $id: 'Budget' },
);
export type BudgetT = Static<typeof Budget>;

export const UsageQuery = Type.Object({
  from: Type.Optional(Type.String({ format: 'date-time', description: 'inclusive' })),
  to: Type.Optional(Type.String({ format: 'date-time', description: 'exclusive' })),
  groupBy: Type.Union([Type.Literal('day'), Type.Literal('user'), Type.Literal('model'), Type.Literal('workspace'), Type.Literal('apiKey')], {
    default: 'day',
  }),
});
export type UsageQueryT = Static<typeof UsageQuery>;

export const UsageRow = Type.Object(
  {
    key: Nullable(Type.String({ description: 'the day (YYYY-MM-DD, UTC), user id, model id, workspace id or API key id (null: no key)' })),
    requests: Type.Integer(),
    promptTokens: Type.Integer(),
    completionTokens: Type.Integer(),
    credits: Type.Number(),
  },
  { $id: 'UsageRow' },
);

export const MeUsage = Type.Object({
  userId: Type.Integer(),
  spent: Type.Object(
    { day: Type.Number(), month: Type.Number(), total: Type.Number() },
    { description: "the caller's own spend in the current UTC day and month, and in total" },
  ),
  budgets: Type.Array(Type.Ref('Budget'), { description: 'every budget that applies to the caller (team, user and this API key)' }),
});
export type MeUsageT = Static<typeof MeUsage>;
