import { Type } from 'typebox';
import { DateTime, Uuid } from '../../http/schemas.js';

export const Role = Type.Union([Type.Literal('owner'), Type.Literal('admin'), Type.Literal('member')]);
const Email = Type.String({ minLength: 3, maxLength: 320, pattern: '^[^@\\s]+@[^@\\s]+$' });
const Name = Type.String({ minLength: 1, maxLength: 200 });

export const User = Type.Object(
  { id: Type.Integer(), name: Type.String(), email: Type.String(), role: Role, instanceAdmin: Type.Boolean(), created: DateTime },
  { $id: 'User' },
);
export const Team = Type.Object({ id: Uuid, name: Type.String() }, { $id: 'Team' });
export const Me = Type.Object({
  user: Type.Object({ id: Type.Integer(), name: Type.String(), email: Type.String(), role: Role, instanceAdmin: Type.Boolean() }),
  team: Type.Ref('Team'),
});

export const CreateTeamBody = Type.Object(
  { name: Name, ownerName: Name, ownerEmail: Email },
  { additionalProperties: false },
);
export const CreateTeamAnswer = Type.Object({ team: Type.Ref('Team'), owner: Type.Ref('User'), apiKey: Type.String() });

export const CreateUserBody = Type.Object(
  { name: Name, email: Email, role: Type.Optional(Role) },
  { additionalProperties: false },
);
export const CreateUserAnswer = Type.Object({ user: Type.Ref('User'), apiKey: Type.String() });

export const ApiKey = Type.Object(
  { id: Uuid, name: Type.String(), prefix: Type.String(), created: DateTime, key: Type.Optional(Type.String()) },
  { $id: 'ApiKey' },
);
export const CreateKeyBody = Type.Object({ name: Name }, { additionalProperties: false });

/** PATCH /users/{userId} (web app, issue 13): the one field a team owner/admin changes. */
export const ChangeRoleBody = Type.Object({ role: Role }, { additionalProperties: false });
