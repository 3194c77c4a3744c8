import { Type } from 'typebox';
import { DateTime, Nullable, Uuid } from '../../http/schemas.js';

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

export const CreateTeamBody = Type.Object({ name: Name, ownerName: Name, ownerEmail: Email }, { additionalProperties: false });
export const CreateTeamAnswer = Type.Object({
  team: Type.Ref('Team'),
  owner: Type.Ref('User'),
  apiKey: Type.String(),
  inviteUrl: Type.String({ description: "The owner's one-use link (7 days) to set a password and sign in" }),
});

/** At least 8 characters, no composition rules; the upper bound keeps hashing cheap to refuse. */
export const Password = Type.String({ minLength: 8, maxLength: 1024 });

export const CreateUserBody = Type.Object(
  {
    name: Name,
    email: Email,
    role: Type.Optional(Role),
    password: Type.Optional(Type.String({ minLength: 8, maxLength: 1024, description: 'The first password; without it the answer carries an invite link' })),
  },
  { additionalProperties: false },
);
export const CreateUserAnswer = Type.Object({
  user: Type.Ref('User'),
  apiKey: Type.String(),
  inviteUrl: Nullable(Type.String({ description: 'One-use link (7 days) with which the user sets a password; null when one was given' })),
});

// Sign-in (docs/API.md, "Sign-in and sessions")
export const LoginBody = Type.Object(
  { email: Type.String({ minLength: 1, maxLength: 320 }), password: Type.String({ minLength: 1, maxLength: 1024 }) },
  { additionalProperties: false },
);
export const AcceptInviteBody = Type.Object({ token: Type.String({ minLength: 1, maxLength: 200 }), password: Password }, { additionalProperties: false });
export const CheckInviteBody = Type.Object({ token: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false });
/** Whom an invite is for: what the "Set your password" page shows before the password is chosen. */
export const InviteInfo = Type.Object({ user: Type.Object({ name: Type.String(), email: Type.String() }), team: Type.Object({ name: Type.String() }) });
/** How people may sign in here: what the sign-in page reads before anyone is signed in. */
export const AuthMethods = Type.Object({
  password: Type.Boolean({ description: 'Whether email and password sign-in is on (PASSWORD_LOGIN)' }),
  oidc: Nullable(
    Type.Object({
      name: Type.String({ description: 'The provider\'s name for the button: "Sign in with <name>"' }),
      loginUrl: Type.String({ description: 'Where the button leads (a top-level navigation, not a fetch)' }),
    }),
  ),
});
export const ChangePasswordBody = Type.Object(
  { currentPassword: Type.String({ minLength: 1, maxLength: 1024 }), newPassword: Password },
  { additionalProperties: false },
);

/** An API key as listed: never the key itself (only its hash is kept). */
export const ApiKey = Type.Object({ id: Uuid, name: Type.String(), prefix: Type.String(), created: DateTime }, { $id: 'ApiKey' });
/** A key just made: the only answer that carries the key, shown once. */
export const CreatedApiKey = Type.Object(
  { id: Uuid, name: Type.String(), prefix: Type.String(), created: DateTime, key: Type.String({ description: 'The key; shown only in this answer' }) },
  { $id: 'CreatedApiKey' },
);
export const CreateKeyBody = Type.Object({ name: Name }, { additionalProperties: false });

/** PATCH /users/{userId} (the web app's Team screen): the one field a team owner/admin changes. */
export const ChangeRoleBody = Type.Object({ role: Role }, { additionalProperties: false });
