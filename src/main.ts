import http from 'node:http';
import { ConfigError, configuredOrigin, loadConfig, type Config } from './config.js';
import { problem } from './http/problem.js';
import { setSecurityHeaders } from './http/security-headers.js';

/** How long after readiness the background warm-up starts. */
const WARM_UP_AFTER_MS = 1000;

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

/**
 * The port is bound before the database is opened and migrated: /healthz (liveness) answers at
 * once, everything else a 503 with Retry-After until the app is ready, then Fastify takes over
 * the same server. A fresh embedded database takes ~2 s to initialise; clients never see a
 * refused connection meanwhile. This file imports only what the bound port needs: the rest of
 * the application (Fastify, the database driver, every module) loads after `listen`.
 */
function startingServer(): { server: http.Server; handOver: () => void; factory: (h: Handler) => http.Server } {
  let live: Handler | null = null;
  let fastifyHandler: Handler | null = null;
  const server = http.createServer((req, res) => {
    if (live) return live(req, res);
    setSecurityHeaders(req.url, res);
    if (req.url === '/healthz') {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
      return;
    }
    const body = JSON.stringify(problem(503, 'starting', 'Atrium is starting; retry shortly'));
    res.writeHead(503, { 'content-type': 'application/problem+json', 'retry-after': '1' }).end(body);
  });
  return {
    server,
    factory: (h) => {
      fastifyHandler = h;
      return server;
    },
    handOver: () => {
      live = fastifyHandler;
    },
  };
}

function listen(server: http.Server, config: Config): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(2);
    }
    throw err;
  }
  const boot = startingServer();
  await listen(boot.server, config);
  // The database opens (seed copy, WebAssembly compile and start, migrations) while the
  // application's modules load and buildApp sets up what needs no database. With
  // the embedded database on its own thread (the default), the thread starts first, before anything else loads.
  // Tracing (when configured) starts before the database, so that its statements are traced.
  if (config.tracing) await (await import('./observability/http.js')).startTracingIfConfigured(config.tracing);
  const thread =
    config.databaseUrl === null && config.embeddedDbThread
      ? (await import('./db/pglite-thread.js')).PGliteThread.start(config.dataDir, config.vectorExtension, config.embeddedSharedBuffers)
      : null;
  const { databaseOptions, openDatabase } = await import('./db/client.js');
  const opening = openDatabase({ ...databaseOptions(config), ...(thread ? { thread } : {}) });
  opening.catch(() => undefined); // reported by buildApp, which awaits it
  const { buildApp } = await import('./app.js');
  const { app, services, generatedAdminKey, adminInviteToken, warmUp } = await buildApp(config, { serverFactory: boot.factory, database: opening });
  if (config.systemModelsFile) {
    const { loadSystemModels } = await import('./system-models.js');
    await loadSystemModels(services.models, config.systemModelsFile);
  }
  // Printed once, to the terminal only (not the log), on the start that created the instance admin;
  // before the hand-over, so that whoever sees /readyz answer 200 can already read the key.
  if (generatedAdminKey || adminInviteToken) {
    const { inviteUrl } = await import('./http/auth.js');
    const lines = ['', `Atrium created the first team and its instance admin (${config.auth.adminEmail}).`];
    if (generatedAdminKey) lines.push('Admin API key (shown once, keep it safe):', '', `  ${generatedAdminKey}`, '');
    if (adminInviteToken) {
      lines.push(
        'Open this link to set the admin password and sign in (one use, 7 days):',
        '',
        `  ${inviteUrl(configuredOrigin(config), adminInviteToken)}`,
        '',
      );
    }
    process.stdout.write(`${lines.join('\n')}\n`);
  }

  boot.handOver();
  app.log.info({ address: `http://${config.host}:${config.port}` }, 'Atrium is ready');
  // What was deferred so it did not delay readiness (request validators and serializers, the
  // tokenizer's tables: about 0.5 s of CPU in all), done once the server has answered its first
  // requests: a client polling /readyz is answered at once instead of after the warm-up, and a
  // request arriving before the warm-up compiles just what it uses.
  setTimeout(warmUp, WARM_UP_AFTER_MS).unref();

  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down: no new connections, finishing in-flight requests');
    const force = setTimeout(() => {
      app.log.error('graceful shutdown took too long; exiting');
      process.exit(1);
    }, 10_000);
    force.unref();
    // Stop accepting and let in-flight requests (streams included) finish, then close the database.
    boot.server.close(() => {
      app.close().then(
        () => process.exit(0),
        (err: unknown) => {
          app.log.error({ err }, 'error during shutdown');
          process.exit(1);
        },
      );
    });
    boot.server.closeIdleConnections();
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

main().catch((err: unknown) => {
  console.error('Atrium failed to start:', err instanceof Error ? err.message : err);
  process.exit(1);
});
