import { parseArgs } from 'node:util';
import { configuredOrigin, loadConfig } from './config.js';
import { openDatabase } from './db/client.js';
import { AppError } from './errors.js';
import { inviteUrl } from './http/auth.js';
import { RetentionService } from './modules/retention/service.js';
import { AuthService } from './modules/teams/auth-service.js';
import { TeamsService } from './modules/teams/service.js';

/**
 * Operator commands on the same services the API uses (docs/API.md, Tenancy). On the embedded database
 * stop the server first: PGlite is single-process — except for `backup`, which asks a running
 * server over its admin socket (ops/admin-socket.ts).
 */
const USAGE = `Usage: npm run cli -- <command> [options]

  teams list
  teams create --name <team> --owner-name <name> --owner-email <email>
  users list --team <teamId>
  users create --team <teamId> --name <name> --email <email> [--role owner|admin|member]
  keys create --user <userId> [--name <label>]
  retention          run the retention job once now (deletes what each team's retention says is too old)
  backup <file>      a consistent copy of the embedded database (asks the running server, if any)
  restore <file>     fill an empty DATA_DIR from a backup file

Reads DATA_DIR / DATABASE_URL like the server (docs/OPERATIONS.md).`;

/** `retention`: one run of the retention job, as every server node runs it hourly (safe beside them). */
async function retentionNow(): Promise<number> {
  const config = loadConfig();
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  try {
    const purged = await new RetentionService(database.db).purge();
    console.log(JSON.stringify({ purged }, null, 2));
    return 0;
  } finally {
    await database.close();
  }
}

async function main(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      'owner-name': { type: 'string' },
      'owner-email': { type: 'string' },
      team: { type: 'string' },
      email: { type: 'string' },
      role: { type: 'string' },
      user: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const [noun, verb] = positionals;
  if ((noun === 'backup' || noun === 'restore') && verb && !values.help) return backupOrRestore(noun, verb);
  if (noun === 'retention' && !verb && !values.help) return retentionNow();
  if (values.help || !noun || !verb) {
    console.log(USAGE);
    return values.help ? 0 : 2;
  }
  const need = (k: keyof typeof values): string => {
    const v = values[k];
    if (typeof v !== 'string' || !v) throw new AppError('bad_request', 'missing_option', `--${k} is required`);
    return v;
  };
  const config = loadConfig();
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  const teams = new TeamsService(database.db, new AuthService(database.db, config.auth), 0);
  const withInviteUrl = <T extends { inviteToken: string | null }>({ inviteToken, ...rest }: T) => ({
    ...rest,
    inviteUrl: inviteToken ? inviteUrl(configuredOrigin(config), inviteToken) : null,
  });
  try {
    // Same first-start rule as the server: an empty database gets its instance admin first.
    const boot = await teams.bootstrap(config.adminApiKey, { email: config.auth.adminEmail, password: config.auth.adminPassword });
    if (boot.created && !config.adminApiKey) console.error(`Created the instance admin. Admin API key (shown once): ${boot.apiKey}`);
    if (boot.created && boot.inviteToken)
      console.error(`Admin sign-in link (sets the password; one use, 7 days): ${inviteUrl(configuredOrigin(config), boot.inviteToken)}`);
    const out = await (async () => {
      switch (`${noun} ${verb}`) {
        case 'teams list':
          return teams.listTeams();
        case 'teams create':
          return withInviteUrl(await teams.createTeam(null, { name: need('name'), ownerName: need('owner-name'), ownerEmail: need('owner-email') }));
        case 'users list':
          return teams.listTeamUsers(need('team'));
        case 'users create': {
          const role = values.role ?? 'member';
          if (role !== 'owner' && role !== 'admin' && role !== 'member') throw new AppError('bad_request', 'bad_role', '--role must be owner, admin or member');
          return withInviteUrl(await teams.addUser(need('team'), { name: need('name'), email: need('email'), role }));
        }
        case 'keys create':
          return teams.addKey(Number(need('user')), values.name ?? 'cli');
        default:
          throw new AppError('bad_request', 'unknown_command', `Unknown command: ${noun} ${verb}\n\n${USAGE}`);
      }
    })();
    console.log(JSON.stringify(out, null, 2));
    return 0;
  } catch (err) {
    console.error(err instanceof AppError ? err.message : err);
    return 1;
  } finally {
    await database.close();
  }
}

/** `backup <file>` / `restore <file>` (ops/backup.ts): they never open the database through the services. */
async function backupOrRestore(command: 'backup' | 'restore', file: string): Promise<number> {
  const { backup, restore, OpsError } = await import('./ops/backup.js');
  try {
    console.log(await (command === 'backup' ? backup : restore)(loadConfig(), file));
    return 0;
  } catch (err) {
    if (err instanceof OpsError) {
      console.error(err.message);
      return 1;
    }
    throw err;
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  },
);
