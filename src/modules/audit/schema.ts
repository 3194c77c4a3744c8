import { Type, type Static } from 'typebox';
import { DateTime, Int32, INT32_MAX, Nullable, Uuid } from '../../http/schemas.js';

export const AuditEntry = Type.Object(
  {
    id: Uuid,
    time: DateTime,
    teamId: Nullable(Uuid),
    actor: Type.Object({
      userId: Nullable(Type.Integer({ description: 'null: the operator (command line) or a background job' })),
      apiKeyId: Nullable(Uuid),
      ip: Nullable(Type.String()),
    }),
    action: Type.String({ description: 'e.g. auth.login, model.update, retention.purge (docs/API.md, "Audit log")' }),
    target: Nullable(Type.Object({ type: Type.String(), id: Type.String() })),
    outcome: Type.Union([Type.Literal('success'), Type.Literal('failure')]),
    details: Type.Record(Type.String(), Type.Unknown()),
  },
  { $id: 'AuditEntry' },
);
export type AuditEntryT = Static<typeof AuditEntry>;

const filters = {
  from: Type.Optional(DateTime),
  to: Type.Optional(DateTime),
  action: Type.Optional(
    Type.String({ pattern: '^[a-z_]+(\\.([a-z_]+|\\*))?$', maxLength: 64, description: 'an action (auth.login), or all of a resource (auth.* or auth)' }),
  ),
  actorId: Type.Optional(Type.Integer({ minimum: 1, maximum: INT32_MAX, description: "the acting user's id" })),
};
export const AuditQuery = Type.Object({
  ...filters,
  page: Int32({ maximum: 1_000_000, default: 0, description: '0-based page number' }),
  size: Type.Integer({ minimum: 1, maximum: 1000, default: 20, description: 'page size' }),
});
export const AuditCsvQuery = Type.Object(filters);
export type AuditFilterQuery = Static<typeof AuditCsvQuery>;
