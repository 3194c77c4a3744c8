import type { FastifyInstance, FastifyServerFactory } from 'fastify';
import type { Config } from './config.js';
import { databaseOptions, openDatabase, type Database } from './db/client.js';
import { createHttpServer } from './http/server.js';
import { preloadTokenizer } from './ingest/tokens.js';
import { closing, Jobs, periodic, type Job } from './jobs.js';
import { TABLE_RULES, upkeep, UPKEEP_EVERY_MS, UPKEEP_LULL } from './db/upkeep.js';
import { FEATURE_READS } from './retrieval/repo.js';
import { refreshSearchStatistics } from './retrieval/search-statistics.js';
import { startTracingIfConfigured } from './observability/http.js';
import { adminSocket } from './ops/admin-socket.js';
import { registerRoutes, SHARED_SCHEMAS } from './routing.js';
import { openInstanceSecrets } from './security/instance-key.js';
import { createServices, serviceJobs, type Services } from './services.js';

export { SHARED_SCHEMAS };

export interface App {
  app: FastifyInstance;
  services: Services;
  database: Database;
  /** the generated instance-admin key when this start bootstrapped an empty database without ADMIN_API_KEY */
  generatedAdminKey: string | null;
  /** the instance admin's invite token when this start bootstrapped an empty database without ADMIN_PASSWORD (main.ts prints its URL) */
  adminInviteToken: string | null;
  /** Start, in the background, the work deferred past readiness (request validators, response serializers, tokenizer). */
  warmUp(): void;
}

/**
 * Build the whole application; production (main.ts) and the tests call this same function, so
 * they run the same validators and plugins. The composition root, in this order:
 *
 * 1. the HTTP server and what every route shares (src/http/server.ts), while the database opens;
 * 2. the database, the instance's secrets, every service in dependency order (src/services.ts)
 *    and the first start's instance admin;
 * 3. the routes, one plugin a module, over those services (src/routing.ts);
 * 4. the background jobs (src/jobs.ts: sweeps, workers, pools, connections, the admin socket,
 *    the database), started once the app is ready and stopped, the last first, when it closes.
 */
export async function buildApp(
  config: Config,
  opts: { logger?: boolean; serverFactory?: FastifyServerFactory; database?: Database | Promise<Database> } = {},
): Promise<App> {
  // main.ts starts opening the database before this module loads and hands over the promise
  // (owned from here on); the HTTP scaffolding is built while it opens.
  // Tracing starts before the database opens, so that its statements are traced (main.ts starts it earlier still).
  if (!opts.database) await startTracingIfConfigured(config.tracing);
  const opening = Promise.resolve(opts.database ?? openDatabase(databaseOptions(config)));
  opening.catch(() => undefined); // awaited below
  let database: Database | null = null;
  let jobs: Jobs | null = null;
  try {
    const http = await createHttpServer(config, {
      logger: opts.logger ?? true,
      schemas: SHARED_SCHEMAS,
      ...(opts.serverFactory ? { serverFactory: opts.serverFactory } : {}),
    });
    const { app } = http;

    // Everything above needs no database; from here on it does.
    database = await opening;
    const db = database;
    // Before anything else: a node whose key differs from the others' refuses to start.
    const secrets = await openInstanceSecrets(db.db, { secretKey: config.secretKey, dataDir: config.dataDir });
    for (const w of secrets.warnings) app.log.warn(w);
    const warn = (err: unknown, what: string) => app.log.warn({ err }, what);
    const services = createServices(db, config, secrets.box, warn);
    // Answers an earlier process acknowledged but was stopped before storing, before anything reads them.
    const replayed = await services.turns.replayJournal().catch(async (err: unknown) => {
      await services.turns.closeJournal();
      throw err;
    });
    if (replayed.stored > 0) app.log.info(`stored ${replayed.stored} answer(s) acknowledged before the last stop`);
    if (replayed.refused.length > 0)
      app.log.error(`the database refused ${replayed.refused.length} answer(s) acknowledged before the last stop (prompt logs ${replayed.refused.join(', ')})`);
    // In start order; stopped in the reverse one: the admin socket first, the database last.
    const { tracing } = http;
    const all: Job[] = [
      ...(tracing ? [closing('span export', () => tracing.flush())] : []),
      closing('database', () => db.close()),
      closing('answer journal', () => services.turns.closeJournal()),
      // No autovacuum runs in the embedded database: its tables are analysed and vacuumed here.
      ...(db.kind === 'pglite'
        ? [
            periodic(
              'embedded database upkeep',
              UPKEEP_EVERY_MS,
              async () => {
                const { analyzed } = await upkeep(db.bulk, TABLE_RULES, db.lull);
                // the planner's view of the chunks' lexemes, which ANALYZE does not sample (retrieval/search-statistics.ts)
                if (!analyzed.includes('plus_chunks')) return;
                await db.lull?.(UPKEEP_LULL.quietMs, UPKEEP_LULL.atMostMs);
                await refreshSearchStatistics(db.bulk, FEATURE_READS.splitAbove);
              },
              (err) => warn(err, 'database upkeep failed'),
            ),
          ]
        : []),
      ...serviceJobs(services, config, warn),
      // `npm run cli -- backup` reaches this server here (embedded database on disk only).
      adminSocket(app.log, config.dataDir, db),
    ];
    const owned = new Jobs(all);
    jobs = owned;
    const boot = await services.teams.bootstrap(config.adminApiKey, { email: config.auth.adminEmail, password: config.auth.adminPassword });

    await registerRoutes(app, services, { config, database: db, allowedMethods: http.allowedMethods });
    app.addHook('onClose', () => owned.stop((err, name) => app.log.error({ err }, `${name}: stopping failed`)));
    await app.ready();
    await owned.start();
    return {
      app,
      services,
      database: db,
      generatedAdminKey: boot.created && !config.adminApiKey ? (boot.apiKey ?? null) : null,
      adminInviteToken: boot.created ? (boot.inviteToken ?? null) : null,
      warmUp: () => {
        http.warm();
        setImmediate(preloadTokenizer);
      },
    };
  } catch (err) {
    // What was built is stopped (the database with it), whether the database had opened before
    // the failure or opens after it.
    if (jobs) await jobs.stop(() => undefined);
    else if (database) await database.close();
    else
      void opening.then(
        (d) => d.close(),
        () => undefined,
      );
    throw err;
  }
}
