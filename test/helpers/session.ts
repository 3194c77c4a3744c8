import { randomInt, randomUUID } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { expectStatus } from './api.js';
import type { TeamFixture, TestApp } from './app.js';

/** A client address of its own per call site, so that one test's failed sign-ins never throttle another's (on a shared PostgreSQL too). */
export const randomAddress = () => `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;

/** Every Set-Cookie of an answer from `t.request` or the typed client's `response`. */
function setCookies(res: LightMyRequestResponse | Response): string[] {
  if (res instanceof Response) return res.headers.getSetCookie();
  const raw = res.headers['set-cookie'];
  return Array.isArray(raw) ? raw : raw ? [raw] : [];
}

/** The `atrium_session` value a response set, or null. */
export function sessionFrom(res: LightMyRequestResponse | Response): string | null {
  const all = setCookies(res);
  for (const c of all) {
    const m = /^atrium_session=([^;]*)/.exec(c);
    if (m) return m[1] || null;
  }
  return null;
}

export function setCookieOf(res: LightMyRequestResponse | Response): string {
  return setCookies(res).join('\n');
}

export const cookie = (token: string) => ({ cookie: `atrium_session=${token}` });
/** What a browser adds to a request from one of the server's own pages (inject's Host is localhost:80). */
export const SAME_ORIGIN = { origin: 'http://localhost:80' };

export async function login(t: TestApp, email: string, password: string, address = randomAddress()): Promise<LightMyRequestResponse> {
  return t.request({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password }, remoteAddress: address });
}

/** A user of the team with a password, signed in: their id, email, key and session token. */
export async function signedInUser(
  t: TestApp,
  team: TeamFixture,
  role: 'owner' | 'admin' | 'member' = 'member',
  password = 'correct horse battery',
): Promise<{ id: number; email: string; key: string; password: string; session: string }> {
  const email = `${role}-${randomUUID()}@example.com`;
  const made = expectStatus(await t.api(team.ownerKey).POST('/api/v1/users', { body: { name: `${role} person`, email, role, password } }), 201);
  const res = await login(t, email, password);
  const session = sessionFrom(res);
  if (res.statusCode !== 200 || !session) throw new Error(`login: ${res.statusCode} ${res.body}`);
  return { id: made.user.id, email, key: made.apiKey, password, session };
}
