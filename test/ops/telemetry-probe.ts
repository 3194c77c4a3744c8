/**
 * Run as a child process by telemetry-off.test.ts: builds the app (in-memory database) with
 * telemetry `on` or `off`, answers one request, and prints how many modules of prom-client and
 * OpenTelemetry were loaded (CommonJS packages are in require.cache however they were imported).
 */
import { createRequire } from 'node:module';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';

const require = createRequire(import.meta.url);
const on = process.argv[2] === 'on';
const config = {
  ...loadConfig({
    DATA_DIR: process.argv[3] ?? '.',
    SECRET_KEY: 'test-secret-key-0123456789',
    LOG_LEVEL: 'silent',
    ...(on ? { METRICS_TOKEN: 'probe-metrics-token-0123456789', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' } : {}),
  }),
  databaseUrl: 'memory://',
};
const { app } = await buildApp(config, { logger: false });
await app.inject({ method: 'GET', url: '/readyz' });
const loaded = Object.keys(require.cache).filter((k) => /[\\/](prom-client|@opentelemetry|@fastify[\\/]otel)[\\/]/.test(k));
process.stdout.write(`${JSON.stringify({ loaded: loaded.length })}\n`);
await app.close();
process.exit(0);
