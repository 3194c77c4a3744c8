import { sql } from 'drizzle-orm';
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { buildApp, type App } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import { ProblemSchema } from '../../src/http/schemas.js';
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
  request(opts: InjectOptions & { key?: string | null }): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

export async function startTestApp(overrides: Partial<Config> = {}): Promise<TestApp> {
  const built = await buildApp(testConfig(overrides), { logger: false });
  const app: FastifyInstance = built.app;
  return {
    ...built,
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
  const res = await t.request({
    method: 'POST',
    url: '/api/v1/teams',
    key: ADMIN_KEY,
    payload: { name, ownerName: 'Owner', ownerEmail: `owner-${randomUUID()}@example.com` },
  });
  if (res.statusCode !== 201) throw new Error(`newTeam: ${res.statusCode} ${res.body}`);
  const body = res.json();
  const ownerKey = body.apiKey as string;
  return {
    teamId: body.team.id,
    ownerKey,
    ownerId: body.owner.id,
    async addUser(role) {
      const r = await t.request({
        method: 'POST',
        url: '/api/v1/users',
        key: ownerKey,
        payload: { name: `${role} user`, email: `${role}-${randomUUID()}@example.com`, role },
      });
      if (r.statusCode !== 201) throw new Error(`addUser: ${r.statusCode} ${r.body}`);
      return { id: r.json().user.id, key: r.json().apiKey };
    },
  };
}

export function expectProblem(res: LightMyRequestResponse, status: number): Record<string, unknown> {
  if (res.statusCode !== status) throw new Error(`expected ${status}, got ${res.statusCode}: ${res.body}`);
  if (!String(res.headers['content-type']).startsWith('application/problem+json')) {
    throw new Error(`expected problem+json, got ${res.headers['content-type']}`);
  }
  const body = expectShape(ProblemSchema, res.json());
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
