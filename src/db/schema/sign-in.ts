/**
 * Sign-in (owner: modules/teams, auth-repo.ts). Credentials live beside `users`, not in it: a
 * user list never loads a password hash.
 */
import { index, integer, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { created, ts } from './columns.js';
import { users } from './teams.js';

/** A user's password: `scrypt$N$r$p$salt$hash` (security/passwords.ts). No row: no password yet. */
export const userPasswords = pgTable('user_passwords', {
  userId: integer('user_id')
    .primaryKey()
    .references(() => users.id, { onDelete: 'cascade' }),
  hash: text('hash').notNull(),
  updated: ts('updated').notNull().defaultNow(),
});

/** Browser sessions: the cookie's SHA-256, never the cookie. `expires` slides forward with use. */
export const sessions = pgTable(
  'sessions',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    tokenHash: text('token_hash').notNull(),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    created: created(),
    expires: ts('expires').notNull(),
  },
  (t) => [uniqueIndex('sessions_token_uq').on(t.tokenHash), index('sessions_user_idx').on(t.userId), index('sessions_expires_idx').on(t.expires)],
);

/** One-use links with which a new user sets their password (the token's SHA-256 only). */
export const userInvites = pgTable(
  'user_invites',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    tokenHash: text('token_hash').notNull(),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    created: created(),
    expires: ts('expires').notNull(),
    used: ts('used'),
  },
  (t) => [uniqueIndex('user_invites_token_uq').on(t.tokenHash), index('user_invites_user_idx').on(t.userId)],
);

/**
 * Sign-in attempts per key (`email:<address>` or `ip:<address>`) in a fixed window, shared by
 * every node: an attempt is counted before its password is checked, so concurrent guesses on
 * several nodes cannot exceed the limit.
 */
export const loginThrottle = pgTable(
  'login_throttle',
  {
    key: text('key').primaryKey(),
    windowStart: ts('window_start').notNull(),
    attempts: integer('attempts').notNull(),
  },
  (t) => [index('login_throttle_window_idx').on(t.windowStart)],
);

/**
 * OpenID Connect sign-ins under way: what the callback must check (state, nonce, PKCE verifier),
 * kept here so whichever node receives the callback can read it. Keyed by the SHA-256 of the
 * state; `browser` is the SHA-256 of a cookie set on the browser that started it. A row is
 * deleted when its callback arrives, so a replayed callback finds nothing.
 */
export const oidcLogins = pgTable(
  'oidc_logins',
  {
    stateHash: text('state_hash').primaryKey(),
    browserHash: text('browser_hash').notNull(),
    nonce: text('nonce').notNull(),
    codeVerifier: text('code_verifier').notNull(),
    redirectUri: text('redirect_uri').notNull(),
    expires: ts('expires').notNull(),
  },
  (t) => [index('oidc_logins_expires_idx').on(t.expires)],
);

/** Which identity-provider account (issuer and subject) a user row belongs to: one row per team the person is placed in. */
export const userIdentities = pgTable(
  'user_identities',
  {
    userId: integer('user_id')
      .primaryKey()
      .references(() => users.id, { onDelete: 'cascade' }),
    issuer: text('issuer').notNull(),
    subject: text('subject').notNull(),
    created: created(),
  },
  (t) => [index('user_identities_subject_idx').on(t.issuer, t.subject)],
);
