/**
 * Shared by the OpenID Connect suites (test/api/oidc.test.ts, test/api/oidc-refusals.test.ts): a
 * real provider on loopback (test/support/oidc-provider.ts), an app signing in through it, and a
 * browser's part of the redirects.
 */
import { randomUUID } from 'node:crypto';
import type { sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect } from 'vitest';
import type { OidcConfig } from '../../src/config.js';
import { Me } from '../../src/modules/teams/schema.js';
import { expectStatus, type ApiResult } from './api.js';
import { startTestApp, testConfig, type TestApp } from './app.js';
import { cookie, sessionFrom, setCookieOf } from './session.js';
import { expectShape } from './shape.js';
import { startTestIdp, type TestIdp } from '../support/oidc-provider.js';

export const PUBLIC_URL = 'http://atrium.test';
export const CALLBACK = `${PUBLIC_URL}/api/v1/auth/oidc/callback`;
export const run = randomUUID().slice(0, 8);
export const RESEARCH = `Research ${run}`;
export const SALES = `Sales ${run}`;

/** The provider and the app of the file's tests (live bindings, set by useOidcSuite's beforeAll). */
export let idp: TestIdp;
export let t: TestApp;

export function oidcConfig(over: Partial<OidcConfig> = {}): OidcConfig {
  return {
    issuer: idp.issuer,
    clientId: idp.clientId,
    clientSecret: idp.clientSecret,
    name: 'Test IdP',
    scopes: 'openid email profile',
    groupsClaim: 'groups',
    teamMap: [
      { group: `research-${run}`, team: RESEARCH, role: 'member' },
      { group: `research-leads-${run}`, team: RESEARCH, role: 'admin' },
      { group: `sales-${run}`, team: SALES, role: 'owner' },
    ],
    ...over,
  };
}

export const startApp = (over: Partial<OidcConfig> = {}, passwordLogin = true) =>
  startTestApp({ auth: { ...testConfig().auth, publicUrl: PUBLIC_URL, passwordLogin, oidc: oidcConfig(over) } });

/** A provider on loopback and an app signing in through it, for the file's tests. */
export function useOidcSuite(): void {
  beforeAll(async () => {
    idp = await startTestIdp({ redirectUris: [CALLBACK] });
    t = await startApp();
  });
  afterAll(async () => {
    await t?.close();
    await idp?.close();
  });
}

export const rows = async <T>(app: TestApp, query: ReturnType<typeof sql>): Promise<T[]> =>
  ((await app.database.db.execute(query)) as unknown as { rows: T[] }).rows;

/** A person at the provider with a fresh username (identities outlive a test file on a shared PostgreSQL). */
export function person(groups: string[], extra: { email?: string | null; emailVerified?: boolean } = {}): string {
  const username = `u-${randomUUID().slice(0, 12)}`;
  idp.accounts.set(username, {
    groups,
    name: `Person ${username}`,
    ...(extra.email === null ? {} : { email: extra.email ?? `${username}@example.com` }),
    ...(extra.emailVerified === undefined ? {} : { emailVerified: extra.emailVerified }),
  });
  return username;
}

/** The app's redirect to the provider and the browser cookie it set. */
export async function start(app: TestApp = t): Promise<{ authorizationUrl: string; browser: string }> {
  const { response } = await app.api().GET('/api/v1/auth/oidc/login');
  expect(response.status).toBe(302);
  const m = /^atrium_oidc=([A-Za-z0-9_-]+);/.exec(setCookieOf(response));
  expect(m, setCookieOf(response)).not.toBeNull();
  return { authorizationUrl: response.headers.get('location')!, browser: m![1]! };
}

/**
 * The browser coming back from the provider to `back` (the callback URL with the provider's query,
 * sent byte for byte: the document lists no query for the callback, whose answer is a redirect either way).
 */
export const callback = (app: TestApp, back: URL | string, browser: string | null): Promise<ApiResult> =>
  app.api(null, { headers: browser ? { cookie: `atrium_oidc=${browser}` } : {} }).GET('/api/v1/auth/oidc/callback', {
    querySerializer: () => (typeof back === 'string' ? back : back.search).replace(/^\?/, ''),
  });

/** The whole sign-in of `username`: the callback's answer. */
export async function signIn(username: string, app: TestApp = t): Promise<ApiResult> {
  const { authorizationUrl, browser } = await start(app);
  return callback(app, await idp.signIn(authorizationUrl, username), browser);
}

/** Where a redirect answer sends the browser. */
export const locationOf = (res: ApiResult): string | null => res.response.headers.get('location');

/** The caller signed in with this session, checked against the server's own schema. */
export async function me(session: string, app: TestApp = t) {
  const who = expectStatus(await app.api(null, { headers: cookie(session) }).GET('/api/v1/me'), 200);
  expectShape(Me, who);
  return who;
}

export function refused(res: ApiResult, reason: string): void {
  expect(res.response.status, JSON.stringify(res.error ?? res.data)).toBe(302);
  expect(locationOf(res)).toBe(`/?signInError=${reason}`);
  expect(sessionFrom(res.response)).toBeNull();
}
