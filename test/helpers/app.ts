import { sql } from 'drizzle-orm';
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { buildApp, type App } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import { ProblemSchema } from '../../src/http/schemas.js';
import { apiClient, expectStatus, type Api, type ApiOptions, type ApiResult } from './api.js';
import { expectShape } from './shape.js';

/** The same key in every test file: on a shared PostgreSQL only the first file bootstraps the admin. */
export const ADMIN_KEY = 'atr_test_instance_admin_key_0123456789';

export function testConfig(overrides: Partial<Config> = {}): Config {
  const base = loadConfig({
    DATA_DIR: mkdtempSync(path.join(tmpdir(), 'atrium-test-')),
    ADMIN_API_KEY: ADMIN_KEY,
    SECRET_KEY: 'test-secret-key-0123456789',
    LOG_LEVEL: 'silent',
  });
  // Tests run on an in-memory PGlite, or on PostgreSQL when the suite is given a database, or
  // (ATRIUM_TEST_EMBEDDED=thread) on an on-disk PGlite in its own thread, as `npm start` runs it.
  if (process.env.ATRIUM_TEST_EMBEDDED === 'thread' && !process.env.ATRIUM_TEST_DATABASE_URL) {
    return { ...base, databaseUrl: null, embeddedDbThread: true, ...overrides };
  }
  const databaseUrl = process.env.ATRIUM_TEST_DATABASE_URL || 'memory://';
  return { ...base, databaseUrl, ...overrides };
}

export interface TestApp extends App {
  /** The typed client (test/helpers/api.ts): `key` is the Bearer token, null or none for anonymous. */
  api(key?: string | null, opts?: ApiOptions): Api;
  /** Untyped inject, only for what the document cannot type: an invalid body, an unknown URL, raw bytes. */
  request(opts: InjectOptions & { key?: string | null }): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

export async function startTestApp(overrides: Partial<Config> = {}): Promise<TestApp> {
  const built = await buildApp(testConfig(overrides), { logger: false });
  const app: FastifyInstance = built.app;
  return {
    ...built,
    api: (key, opts) => apiClient(app, key, opts),
    request: ({ key, headers, ...rest }) => app.inject({ ...rest, headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...headers } }),
    close: () => app.close(),
  };
}

export interface TeamFixture {
  teamId: string;
  ownerKey: string;
  ownerId: number;
  /** a user of the given role with their own key */
  addUser(role: 'owner' | 'admin' | 'member'): Promise<{ id: number; key: string }>;
}

/** A fresh team per test, made through the API as the instance admin would. */
export async function newTeam(t: TestApp, name = `team-${randomUUID().slice(0, 8)}`): Promise<TeamFixture> {
  const body = expectStatus(
    await t.api(ADMIN_KEY).POST('/api/v1/teams', { body: { name, ownerName: 'Owner', ownerEmail: `owner-${randomUUID()}@example.com` } }),
    201,
  );
  const ownerKey = body.apiKey;
  return {
    teamId: body.team.id,
    ownerKey,
    ownerId: body.owner.id,
    async addUser(role) {
      const made = expectStatus(
        await t.api(ownerKey).POST('/api/v1/users', { body: { name: `${role} user`, email: `${role}-${randomUUID()}@example.com`, role } }),
        201,
      );
      return { id: made.user.id, key: made.apiKey };
    },
  };
}

/** A problem+json answer of this status, from `t.request` or from the typed client (`{ error, response }`). */
export function expectProblem(res: LightMyRequestResponse | ApiResult, status: number): Record<string, unknown> {
  const got =
    'response' in res
      ? {
          code: res.response.status,
          type: res.response.headers.get('content-type'),
          body: () => res.error ?? res.data,
          text: () => JSON.stringify(res.error ?? res.data),
        }
      : { code: res.statusCode, type: res.headers['content-type'], body: () => res.json() as unknown, text: () => res.body };
  if (got.code !== status) throw new Error(`expected ${status}, got ${got.code}: ${got.text()}`);
  if (!String(got.type).startsWith('application/problem+json')) {
    throw new Error(`expected problem+json, got ${got.type}`);
  }
  const body = expectShape(ProblemSchema, got.body());
  if (body.status !== status) throw new Error(`problem status ${body.status} != ${status}`);
  return body;
}

/** Every stored message of a thread, whatever its version or branch (a thread lists only its active path). */
export async function storedMessageCount(t: App, threadId: string): Promise<number> {
  const res = (await t.database.db.execute(sql`select count(*)::int as n from chat_messages where thread_id = ${threadId}::uuid`)) as unknown as {
    rows: Array<{ n: number }>;
  };
  return Number(res.rows[0]?.n ?? 0);
}
