import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { loadSystemModels } from '../src/system-models.js';
import { newTeam, startTestApp, type TestApp } from './helpers/app.js';

describe('config', () => {
  it('has the documented defaults', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({ port: 8080, host: '127.0.0.1', databaseUrl: null, providerUrlPolicy: 'allow-private', adminApiKey: null });
    expect(c.dataDir).toBe(path.resolve('./data'));
    expect(Object.isFrozen(c)).toBe(true);
  });

  it('fails fast naming every bad variable', () => {
    let err: unknown;
    try {
      loadConfig({ PORT: 'eighty', DATABASE_URL: 'mysql://x', PROVIDER_URL_POLICY: 'anything', UPLOAD_MAX_FILES: '0' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const msg = (err as Error).message;
    for (const name of ['PORT', 'DATABASE_URL', 'PROVIDER_URL_POLICY', 'UPLOAD_MAX_FILES']) expect(msg).toContain(name);
  });

  it('parses numbers and the policy', () => {
    const c = loadConfig({ PORT: '9000', PROVIDER_URL_POLICY: 'public-only', UPLOAD_MAX_FILE_BYTES: '2048', DATABASE_URL: 'postgres://u@h/db' });
    expect(c).toMatchObject({ port: 9000, providerUrlPolicy: 'public-only', databaseUrl: 'postgres://u@h/db', upload: { maxFileBytes: 2048 } });
  });
});

describe('system models from configuration', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('upserts the file’s models by id, and teams see them with includeSystem', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'atrium-sys-'));
    const file = path.join(dir, 'models.json');
    const id = '6f1d7a52-9d1e-4b35-9a3c-0d9f6a1b2c3d';
    writeFileSync(file, JSON.stringify([{ id, name: 'House GPT', apiBase: 'VENDOR_A', url: 'http://127.0.0.1:9/v1', baseModel: 'gpt-x', apiKey: 'sk-house-7777' }]));
    expect(await loadSystemModels(t.services.models, file)).toBe(1);
    writeFileSync(file, JSON.stringify([{ id, name: 'House GPT v2', apiBase: 'OPENAI', baseModel: 'gpt-y' }]));
    await loadSystemModels(t.services.models, file);
    const team = await newTeam(t);
    const res = await t.request({ method: 'GET', url: `/api/v1/models/${id}`, key: team.ownerKey });
    expect(res.json()).toMatchObject({ id, name: 'House GPT v2', baseModel: 'gpt-y', system: true, apiKey: '••••7777' });

    writeFileSync(file, JSON.stringify([{ name: 'no id' }]));
    await expect(loadSystemModels(t.services.models, file)).rejects.toThrow(file);
  });
});
