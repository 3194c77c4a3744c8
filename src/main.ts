import { buildApp } from './app.js';
import { ConfigError, loadConfig } from './config.js';
import { loadSystemModels } from './system-models.js';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(2);
    }
    throw err;
  }
  const { app, services, generatedAdminKey } = await buildApp(config);
  if (config.systemModelsFile) await loadSystemModels(services.models, config.systemModelsFile);
  if (generatedAdminKey) {
    // Printed once, to the terminal only (not the log), on the start that created the instance admin.
    process.stdout.write(
      `\nAtrium created the first team and its instance admin.\nAdmin API key (shown once, keep it safe):\n\n  ${generatedAdminKey}\n\n`,
    );
  }

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
    app.close().then(
      () => process.exit(0),
      (err: unknown) => {
        app.log.error({ err }, 'error during shutdown');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));

  await app.listen({ port: config.port, host: config.host });
}

main().catch((err: unknown) => {
  console.error('Atrium failed to start:', err instanceof Error ? err.message : err);
  process.exit(1);
});
