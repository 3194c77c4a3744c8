/**
 * Print the OpenAPI document the server serves at /openapi.json, built with buildApp on an
 * in-memory database and without opening a port: `tsx test/openapi/dump.ts [out.json]`.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';

export async function openapiDocument(): Promise<Record<string, unknown>> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'atrium-openapi-'));
  const config = { ...loadConfig({ DATA_DIR: dataDir, SECRET_KEY: 'openapi-dump-secret-key-0123', LOG_LEVEL: 'silent' }), databaseUrl: 'memory://' };
  const { app } = await buildApp(config, { logger: false });
  try {
    const res = await app.inject({ method: 'GET', url: '/openapi.json' });
    if (res.statusCode !== 200) throw new Error(`GET /openapi.json answered ${res.statusCode}`);
    return res.json();
  } finally {
    await app.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const isMain = process.argv[1] && path.resolve(process.argv[1]) === path.resolve(new URL(import.meta.url).pathname);
if (isMain) {
  const doc = JSON.stringify(await openapiDocument(), null, 2);
  const out = process.argv[2];
  if (out) writeFileSync(out, doc + '\n');
  else process.stdout.write(doc + '\n');
}
