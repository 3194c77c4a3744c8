/**
 * SECRET_KEY fingerprint (8.4): a node whose key is not the database's refuses to start, on PGlite
 * (a data folder on disk) and on PostgreSQL (a database of its own per test, when
 * ATRIUM_TEST_DATABASE_URL is set: the suite's shared database must keep the suite's key).
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, type Config } from '../../src/config.js';
import { openDatabase } from '../../src/db/client.js';
import { openInstanceSecrets } from '../../src/security/instance-key.js';
import { ADMIN_KEY, startTestApp, type TestApp } from '../helpers/app.js';
import { createModel } from '../helpers/factories.js';

const PG_URL = process.env.ATRIUM_TEST_DATABASE_URL || null;
const KEY_A = 'key-a-0123456789abcdef';
const KEY_B = 'key-b-0123456789abcdef';
const dropLater: string[] = [];

/** A database no other test uses: its own PostgreSQL database, or an on-disk PGlite in a data folder. */
async function freshDatabase(): Promise<{ databaseUrl: string | null; dataDir: string }> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'atrium-key-'));
  if (!PG_URL) return { databaseUrl: null, dataDir };
  const name = `atrium_keytest_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  dropLater.push(name);
  const url = new URL(PG_URL);
  url.pathname = `/${name}`;
  return { databaseUrl: url.toString(), dataDir };
}

afterAll(async () => {
  if (!PG_URL || dropLater.length === 0) return;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  for (const name of dropLater) await admin.query(`drop database if exists ${name} with (force)`);
  await admin.end();
});

type Where = { databaseUrl: string | null; dataDir: string };
/** A node on that database. On PostgreSQL each node has its own data folder unless told otherwise. */
const node = (where: Where, secretKey: string | null, overrides: Partial<Config> = {}) =>
  startTestApp({ databaseUrl: where.databaseUrl, dataDir: PG_URL ? mkdtempSync(path.join(tmpdir(), 'atrium-node-')) : where.dataDir, secretKey, ...overrides });

async function refusal(start: Promise<TestApp>): Promise<ConfigError> {
  const outcome = await start.then(
    async (app) => {
      await app.close();
      return null;
    },
    (err: unknown) => err,
  );
  if (!(outcome instanceof ConfigError)) throw new Error(`expected the start to be refused, got ${String(outcome)}`);
  return outcome;
}

async function fingerprint(app: TestApp): Promise<string | null> {
  const r = (await app.database.db.execute(sql`select value from instance_settings where name = 'secret_key_fingerprint'`)) as unknown as {
    rows: Array<{ value: string }>;
  };
  return r.rows[0]?.value ?? null;
}

/** A model as the instance admin reads it (its provider key masked). */
const readModel = async (app: TestApp, modelId: string) => (await app.api(ADMIN_KEY).GET('/api/v1/models/{modelId}', { params: { path: { modelId } } })).data;

/** The instance admin's key works on this node, and a model with a sealed provider key is made. */
async function modelWithKey(app: TestApp, apiKey: string) {
  const { response } = await app.api(ADMIN_KEY).GET('/api/v1/me');
  expect(response.status).toBe(200);
  return createModel(app, ADMIN_KEY, { apiKey });
}

describe('SECRET_KEY fingerprint', { timeout: 120_000 }, () => {
  it('a node with another SECRET_KEY refuses to start; the right key still starts', async () => {
    const where = await freshDatabase();
    const first = await node(where, KEY_A);
    const model = await modelWithKey(first, 'sk-live-abcdefghijklmnop');
    const stored = await fingerprint(first);
    expect(stored).toMatch(/^v1:[0-9a-f]{64}$/);
    expect(stored).not.toContain(KEY_A);
    await first.close();

    const err = await refusal(node(where, KEY_B));
    expect(err.message).toContain('SECRET_KEY');
    expect(err.message).not.toContain(KEY_B);
    expect(err.message).not.toContain(KEY_A);

    const again = await node(where, KEY_A);
    try {
      expect(await fingerprint(again)).toBe(stored);
      const res = await readModel(again, model.id);
      expect(res?.apiKey).toBe('••••mnop');
    } finally {
      await again.close();
    }
  });

  it('without SECRET_KEY a key is generated only for a database that holds no key yet', async () => {
    const where = await freshDatabase();
    const first = await node(where, null, { dataDir: where.dataDir });
    const keyFile = path.join(where.dataDir, 'secret.key');
    expect(existsSync(keyFile)).toBe(true);
    await createModel(first, ADMIN_KEY, { apiKey: 'sk-generated-key-000000' });
    await first.close();

    // the same data folder starts again with its key file
    const again = await node(where, null, { dataDir: where.dataDir });
    await again.close();

    // a node without the key (a new data folder next to the same PostgreSQL, or a lost key file)
    const newcomer = PG_URL ? mkdtempSync(path.join(tmpdir(), 'atrium-node-')) : where.dataDir;
    if (!PG_URL) rmSync(keyFile);
    const err = await refusal(node(where, null, { dataDir: newcomer }));
    expect(err.message).toMatch(/SECRET_KEY is not set/);
    expect(existsSync(path.join(newcomer, 'secret.key'))).toBe(false);
  });

  it('a database from before fingerprints takes the key that opens its provider keys, and refuses another', async () => {
    const where = await freshDatabase();
    const first = await node(where, KEY_A);
    const model = await modelWithKey(first, 'sk-older-database-key');
    await first.database.db.execute(sql`delete from instance_settings`);
    await first.close();

    await refusal(node(where, KEY_B));

    const right = await node(where, KEY_A);
    try {
      expect(await fingerprint(right)).toMatch(/^v1:/);
      const res = await readModel(right, model.id);
      expect(res?.apiKey).toBe('••••-key');
    } finally {
      await right.close();
    }
    await refusal(node(where, KEY_B));
  });

  it('a database from before fingerprints without provider keys takes any key', async () => {
    const where = await freshDatabase();
    const first = await node(where, KEY_A);
    await first.database.db.execute(sql`delete from instance_settings`);
    await first.close();
    const other = await node(where, KEY_B);
    await other.close();
    await refusal(node(where, KEY_A));
  });

  it('nodes starting together with different keys: exactly one fingerprint wins', async () => {
    const where = await freshDatabase();
    const database = await openDatabase({ databaseUrl: where.databaseUrl ?? 'memory://', dataDir: where.dataDir });
    try {
      for (let round = 0; round < 5; round++) {
        await database.db.execute(sql`delete from instance_settings`);
        const keys = ['round-key-one-0123456789', 'round-key-two-0123456789', 'round-key-three-012345678'];
        const outcomes = await Promise.allSettled(keys.map((secretKey) => openInstanceSecrets(database.db, { secretKey, dataDir: where.dataDir })));
        expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
        for (const o of outcomes) if (o.status === 'rejected') expect(o.reason).toBeInstanceOf(ConfigError);
      }
    } finally {
      await database.close();
    }
  });

  it.skipIf(!PG_URL)('two whole nodes starting together on one PostgreSQL with different keys: one starts', async () => {
    const where = await freshDatabase();
    const outcomes = await Promise.allSettled([node(where, KEY_A), node(where, KEY_B)]);
    const started = outcomes.filter((o): o is PromiseFulfilledResult<TestApp> => o.status === 'fulfilled');
    expect(started).toHaveLength(1);
    const failed = outcomes.find((o) => o.status === 'rejected');
    expect(failed?.reason).toBeInstanceOf(ConfigError);
    await started[0]!.value.close();
  });

  it('keys saved before short keys lost their hint are masked without characters after the next start', async () => {
    const where = await freshDatabase();
    const first = await node(where, KEY_A);
    const short = await createModel(first, ADMIN_KEY, { apiKey: 'abc' });
    const long = await createModel(first, ADMIN_KEY, { apiKey: 'sk-long-enough-key-wxyz' });
    // as an older version stored them: the last four characters, whatever the key's length
    await first.database.db.execute(sql`update models set api_key_last4 = 'abc' where id = ${short.id}::uuid`);
    await first.database.db.execute(sql`delete from instance_settings where name = 'short_key_hints_hidden'`);
    const before = await readModel(first, short.id);
    expect(before?.apiKey).toBe('••••abc');
    await first.close();

    const again = await node(where, KEY_A);
    try {
      const s = await readModel(again, short.id);
      expect(s?.apiKey).toBe('••••');
      const l = await readModel(again, long.id);
      expect(l?.apiKey).toBe('••••wxyz');
    } finally {
      await again.close();
    }
  });
});
