/**
 * Child-process entry that hosts ONE server of a benchmark (stand-in provider, bare pass-through
 * or Atrium), so each runs on its own event loop, as it would in production, instead of sharing
 * the load generator's. Driven over IPC by {@link ServerProcess} (./child.ts); not run by hand.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import Fastify, { type FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { ADMIN_KEY } from '../../test/helpers/app.js';
import { readPhases, startPhases } from './phases.js';
import { startStandInProvider, type StandInProvider, type StandInSwitches } from '../../test/support/standin-provider.js';

interface Msg {
  id: number;
  cmd: string;
  args?: Record<string, unknown>;
}

let standIn: StandInProvider | null = null;
let server: FastifyInstance | null = null;
let dataDir: string | null = null;

async function startBare(upstream: string): Promise<string> {
  const app = Fastify({ logger: false });
  // The whole reference: parse the JSON body, forward it with fetch, return the upstream's answer.
  app.post('/v1/chat/completions', async (req, reply) => {
    const body = req.body as { stream?: boolean };
    const res = await fetch(`${upstream}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    reply.code(res.status);
    if (body.stream === true && res.body) {
      reply.header('content-type', res.headers.get('content-type') ?? 'text/event-stream');
      return reply.send(Readable.fromWeb(res.body as import('node:stream/web').ReadableStream));
    }
    return res.json();
  });
  server = app;
  return app.listen({ port: 0, host: '127.0.0.1' });
}

/** `telemetry`: METRICS_TOKEN and/or an OTLP traces URL for this server (bench/telemetry-overhead.ts). */
async function startAtrium(
  databaseUrl: string | null,
  embeddedDbThread = false,
  telemetry: { metricsToken?: string; tracesUrl?: string } = {},
): Promise<string> {
  dataDir = mkdtempSync(path.join(tmpdir(), 'atrium-bench-'));
  // testConfig() of test/helpers/app.ts, with a real on-disk DATA_DIR (PGlite as in production) or PostgreSQL.
  const config = {
    ...loadConfig({
      DATA_DIR: dataDir,
      ADMIN_API_KEY: ADMIN_KEY,
      SECRET_KEY: 'test-secret-key-0123456789',
      LOG_LEVEL: 'silent',
      EMBEDDED_SHARED_BUFFERS: process.env.EMBEDDED_SHARED_BUFFERS ?? 'auto',
    }),
    databaseUrl,
    embeddedDbThread,
    metricsToken: telemetry.metricsToken ?? null,
    tracing: telemetry.tracesUrl ? { tracesUrl: telemetry.tracesUrl, headers: {}, serviceName: 'atrium-bench', protocol: 'http/protobuf' as const } : null,
  };
  const built = await buildApp(config, { logger: false });
  server = built.app;
  return built.app.listen({ port: 0, host: '127.0.0.1' });
}

async function handle(m: Msg): Promise<unknown> {
  const a = m.args ?? {};
  switch (m.cmd) {
    case 'standin.start':
      standIn = await startStandInProvider();
      return { url: standIn.url, openaiBaseUrl: standIn.openaiBaseUrl };
    case 'standin.set':
      standIn!.set(a as Partial<StandInSwitches>);
      return null;
    case 'standin.requests': {
      const n = Number(a.n ?? 1);
      return standIn!.requests.slice(-n).map((r) => ({ path: r.path, body: r.body as unknown }));
    }
    case 'standin.reset':
      standIn!.reset();
      return null;
    case 'bare.start':
      return { url: await startBare(String(a.upstream)) };
    case 'atrium.start':
      return {
        url: await startAtrium((a.databaseUrl as string | null | undefined) ?? null, a.embeddedDbThread === true, {
          ...(typeof a.metricsToken === 'string' ? { metricsToken: a.metricsToken } : {}),
          ...(typeof a.tracesUrl === 'string' ? { tracesUrl: a.tracesUrl } : {}),
        }),
      };
    case 'phases.start':
      startPhases(server!.server);
      return null;
    case 'phases.read':
      return readPhases();
    case 'close':
      await server?.close();
      await standIn?.close();
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
      return null;
    default:
      throw new Error(`unknown command ${m.cmd}`);
  }
}

process.on('message', (m: Msg) => {
  handle(m).then(
    (result) => process.send!({ id: m.id, ok: true, result }),
    (err: unknown) => process.send!({ id: m.id, ok: false, error: err instanceof Error ? (err.stack ?? err.message) : String(err) }),
  );
});
// The parent went away: do not linger.
process.on('disconnect', () => process.exit(0));
process.send!({ id: 0, ok: true, result: 'ready' });
