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

export const DeleteResponse = Type.Object({ deleted: Type.Boolean() });

/** The error answers every authenticated route may give, for the OpenAPI document. */
export const errorResponses = {
  400: Type.Ref('Problem'),
  401: Type.Ref('Problem'),
  403: Type.Ref('Problem'),
  404: Type.Ref('Problem'),
} as const;

export const IdParams = (name: string) => Type.Object({ [name]: Uuid });

/** CONTRACT §4 ranges of the generation settings, shared by workspace model settings and per-request overrides. */
export const GenerationParamFields = {
  temperature: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 2 }))),
  maxTokens: Type.Optional(Nullable(Type.Integer({ minimum: 1 }))),
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
