/**
 * OpenID Connect callbacks that must sign nobody in (docs/API.md, "Sign-in with an identity
 * provider"), against a real provider on loopback: a tampered state, a callback in another
 * browser, a replayed callback or code, the provider's own refusal, an ID token expired, from
 * another issuer or client, with another nonce or signed with another key; key rotation; a
 * callback on another node and two racing ones; malformed callbacks.
 */
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { callback, CALLBACK, idp, locationOf, me, person, refused, RESEARCH, rows, run, signIn, start, startApp, t, useOidcSuite } from '../helpers/oidc.js';
import { sessionFrom } from '../helpers/session.js';
import type { TestIdp } from '../support/oidc-provider.js';

useOidcSuite();

describe('callbacks that must not sign anyone in', () => {
  it('refuses a tampered state, and a callback without the browser cookie of the sign-in', async () => {
    const username = person([`research-${run}`]);
    const { authorizationUrl, browser } = await start();
    const back = await idp.signIn(authorizationUrl, username);
    const tampered = new URL(back);
    tampered.searchParams.set('state', `${back.searchParams.get('state')}x`);
    refused(await callback(t, tampered, browser), 'failed');
    refused(await callback(t, back, null), 'failed');
    // The other-browser attempt used the state up: the real browser cannot finish it either.
    refused(await callback(t, back, browser), 'failed');
  });

  it('refuses a replayed callback, and a replayed code under a fresh state', async () => {
    const username = person([`research-${run}`]);
    const { authorizationUrl, browser } = await start();
    const back = await idp.signIn(authorizationUrl, username);
    const first = await callback(t, back, browser);
    expect(locationOf(first)).toBe('/');
    refused(await callback(t, back, browser), 'failed');

    const fresh = await start();
    const replay = new URL(back);
    replay.searchParams.set('state', new URL(fresh.authorizationUrl).searchParams.get('state')!);
    refused(await callback(t, replay, fresh.browser), 'failed');
  });

  it('refuses what the provider itself refused (error in the callback)', async () => {
    const { authorizationUrl, browser } = await start();
    const back = new URL(CALLBACK);
    back.searchParams.set('error', 'access_denied');
    back.searchParams.set('state', new URL(authorizationUrl).searchParams.get('state')!);
    refused(await callback(t, back, browser), 'denied');
  });

  it('refuses an ID token expired, from another issuer, for another client, with another nonce, or signed with another key', async () => {
    const now = Math.floor(Date.now() / 1000);
    const cases: Array<NonNullable<TestIdp['tamper']>> = [
      { claims: (c) => ({ ...c, iat: now - 7200, exp: now - 3600 }) },
      { claims: (c) => ({ ...c, iss: 'http://127.0.0.1:1/' }) },
      { claims: (c) => ({ ...c, aud: 'another-client' }) },
      { claims: (c) => ({ ...c, nonce: 'another-nonce' }) },
      { otherKey: true },
    ];
    try {
      for (const tamper of cases) {
        idp.tamper = tamper;
        const username = person([`research-${run}`]);
        refused(await signIn(username), 'failed');
        expect(await rows(t, sql`select 1 from users where email = ${`${username}@example.com`}`)).toHaveLength(0);
      }
    } finally {
      idp.tamper = null;
    }
    // The same provider, untampered, still signs people in.
    expect(locationOf(await signIn(person([`research-${run}`])))).toBe('/');
  });

  it('refuses a provider whose discovery document names another issuer', async () => {
    const app = await startApp({ issuer: idp.issuer.replace('127.0.0.1', 'localhost') });
    try {
      refused(await app.api().GET('/api/v1/auth/oidc/login'), 'unavailable');
    } finally {
      await app.close();
    }
  });

  it("signs people in at once after the provider's keys rotate, and never with a key it does not publish", async () => {
    expect(locationOf(await signIn(person([`research-${run}`])))).toBe('/');
    idp.rotateKeys();
    // The keys were fetched moments ago; the new key id makes them be fetched again.
    expect(locationOf(await signIn(person([`research-${run}`])))).toBe('/');
    expect(locationOf(await signIn(person([`research-${run}`])))).toBe('/');
    // A key id the provider does not publish, even after a fresh fetch: refused.
    idp.tamper = { otherKey: true, kid: 'unpublished' };
    try {
      refused(await signIn(person([`research-${run}`])), 'failed');
    } finally {
      idp.tamper = null;
    }
    expect(locationOf(await signIn(person([`research-${run}`])))).toBe('/');
  });
});

describe('several nodes', () => {
  // On PostgreSQL a second app is a second node over the same database; the embedded database has one process.
  const secondNode = () => (process.env.ATRIUM_TEST_DATABASE_URL ? startApp() : Promise.resolve(null));

  it('finishes on another node a sign-in started on this one, and lets one of two racing callbacks win', async () => {
    const other = await secondNode();
    const node2 = other ?? t;
    try {
      const { authorizationUrl, browser } = await start(t);
      const back = await idp.signIn(authorizationUrl, person([`research-${run}`]));
      const answers = await Promise.all([callback(node2, back, browser), callback(t, back, browser)]);
      const signedIn = answers.filter((a) => locationOf(a) === '/');
      expect(signedIn).toHaveLength(1);
      for (const a of answers.filter((x) => x !== signedIn[0])) refused(a, 'failed');
      expect((await me(sessionFrom(signedIn[0]!.response)!, node2)).team.name).toBe(RESEARCH);
    } finally {
      await other?.close();
    }
  });
});

describe('callbacks of any shape', () => {
  it('answers every malformed callback with the sign-in page and a reason, never an error', async () => {
    const { browser } = await start();
    for (const query of ['', '?state=', '?code=x', `?state=${'s'.repeat(5000)}&code=y`, '?state=a&state=b&code=c', '?state=%E2%82%AC&code=%FF', '?error=x']) {
      refused(await callback(t, query, browser), 'failed');
    }
  });
});
