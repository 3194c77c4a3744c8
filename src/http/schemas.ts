import { Type, type TSchema } from 'typebox';

/** Shapes shared by many routes. One schema each: validation, serialisation, OpenAPI and types. */
export const Uuid = Type.String({ format: 'uuid' });
export const DateTime = Type.String({ format: 'date-time' });
export const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

export const ProblemSchema = Type.Object(
  {
    type: Type.String(),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    code: Type.String(),
    errors: Type.Optional(Type.Array(Type.Object({ path: Type.String(), message: Type.String() }))),
  },
  { $id: 'Problem' },
);

/** The largest value of a PostgreSQL `integer` column: integers bound for one are capped here, so a bigger one is a 400, not a 500. */
export const INT32_MAX = 2_147_483_647;
export const Int32 = (opts: { minimum?: number; maximum?: number; default?: number; description?: string } = {}) =>
  Type.Integer({ minimum: 0, maximum: INT32_MAX, ...opts });

export const DeleteResponse = Type.Object({ deleted: Type.Boolean() });

const PROBLEM_DESCRIPTIONS = {
  400: 'Bad request: malformed JSON, a wrong type, a value out of range, a bad UUID',
  401: 'No or unknown API key or session',
  403: 'The caller lacks the role for this (or, with the session cookie, the request came from another origin: code csrf)',
  404: 'No such resource visible to the caller',
  409: 'Conflict with an existing resource',
  413: 'Body or file too large',
  415: 'Unsupported media type',
  429: 'Too many requests; retry after the seconds in Retry-After',
  502: 'The model provider failed',
  504: 'The model provider timed out',
} as const;
type ProblemStatus = keyof typeof PROBLEM_DESCRIPTIONS;

/** An error answer as declared in a route's schema: RFC 9457 problem details, whatever the route's success type. */
const problemResponse = (status: ProblemStatus) => ({
  description: PROBLEM_DESCRIPTIONS[status],
  content: { 'application/problem+json': { schema: Type.Ref('Problem') } },
});

/** The error answers of the given statuses, for a route's `response` schema (and so the OpenAPI document). */
export function problems<S extends ProblemStatus>(...statuses: S[]): Record<S, ReturnType<typeof problemResponse>> {
  return Object.fromEntries(statuses.map((s) => [s, problemResponse(s)])) as Record<S, ReturnType<typeof problemResponse>>;
}

/** The error answers every authenticated route may give. */
export const errorResponses = problems(400, 401, 403, 404);
/** ... and those of every route that reads a JSON body. */
export const bodyErrorResponses = problems(400, 401, 403, 404, 413, 415);

/** The ranges (docs/API.md) of the generation settings, shared by workspace model settings and per-request overrides. */
export const GenerationParamFields = {
  temperature: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 2 }))),
  maxTokens: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: INT32_MAX }))),
  topP: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 1 }))),
  n: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 8 }))),
  frequencyPenalty: Type.Optional(Nullable(Type.Number({ minimum: -2, maximum: 2 }))),
  presencePenalty: Type.Optional(Nullable(Type.Number({ minimum: -2, maximum: 2 }))),
  logitBias: Type.Optional(
    Nullable(
      Type.Record(Type.String({ pattern: '^[0-9]+$' }), Type.Number({ minimum: -100, maximum: 100 }), {
        maxProperties: 300,
        additionalProperties: false,
      }),
    ),
  ),
};
