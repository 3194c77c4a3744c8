import type { Db } from '../../db/client.js';
import { forbidden, notFound } from '../../errors.js';
import { recordAudit } from '../audit/record.js';
import { ChatRepo } from '../chat/repo.js';
import { purgePromptLogs } from '../prompt-logs/repo.js';
import { isTeamOwner, type Principal } from '../../policy/index.js';
import { RetentionRepo, type RetentionRow } from './repo.js';
import type { PatchTeamBodyT, TeamSettingsT } from './schema.js';

const DAY_MS = 86_400_000;
/** How often each node runs the retention job (besides once at start-up). */
export const RETENTION_EVERY_MS = 3_600_000;

export interface PurgeResult {
  teamId: string;
  threads: number;
  promptLogs: number;
}

/**
 * Per-team retention: the settings (`GET`/`PATCH /teams/{teamId}`) and the job that deletes what
 * is older than them. The job is safe on every node at once: each team is purged in one
 * transaction that first locks the team's settings row with `FOR UPDATE SKIP LOCKED`, so a node
 * that finds it locked skips the team (another node is purging it), and one that comes after
 * finds nothing left to delete. Each purge that deleted anything writes one `retention.purge`
 * entry with its counts, in the same transaction.
 */
export class RetentionService {
  private readonly repo = new RetentionRepo();
  private readonly chat = new ChatRepo();

  constructor(private readonly db: Db) {}

  private settings(caller: Principal, teamId: string, row: RetentionRow | undefined): TeamSettingsT {
    return {
      id: teamId,
      name: caller.teamName,
      retention: { threadsDays: row?.threadsDays ?? null, promptLogsDays: row?.promptLogsDays ?? null },
    };
  }

  /** The caller's own team (any member); another team answers 404 like a missing one. */
  async get(caller: Principal, teamId: string): Promise<TeamSettingsT> {
    if (teamId !== caller.teamId) throw notFound('Team');
    return this.settings(caller, teamId, await this.repo.find(this.db, teamId));
  }

  /** Change the team's retention (team owner); recorded as `team.update`. */
  async update(caller: Principal, teamId: string, body: PatchTeamBodyT): Promise<TeamSettingsT> {
    if (teamId !== caller.teamId) throw notFound('Team');
    if (!isTeamOwner(caller)) throw forbidden("Only a team owner may change the team's retention");
    const saved = await this.db.transaction(async (tx) => {
      const current = await this.repo.find(tx, teamId);
      const r = body.retention;
      const next = {
        teamId,
        threadsDays: r.threadsDays !== undefined ? r.threadsDays : (current?.threadsDays ?? null),
        promptLogsDays: r.promptLogsDays !== undefined ? r.promptLogsDays : (current?.promptLogsDays ?? null),
      };
      const row = await this.repo.upsert(tx, next);
      await recordAudit(tx, {
        action: 'team.update',
        actor: caller,
        target: { type: 'team', id: teamId },
        details: { threadsDays: row.threadsDays, promptLogsDays: row.promptLogsDays },
      });
      return row;
    });
    return this.settings(caller, teamId, saved);
  }

  /** Run the job once now over every team with a retention: what each purge deleted (teams with nothing to delete, or purged by another node meanwhile, are left out). */
  async purge(now = new Date()): Promise<PurgeResult[]> {
    const results: PurgeResult[] = [];
    for (const teamId of await this.repo.teamsWithRetention(this.db)) {
      const r = await this.purgeTeam(teamId, now);
      if (r) results.push(r);
    }
    return results;
  }

  private purgeTeam(teamId: string, now: Date): Promise<PurgeResult | null> {
    return this.db.transaction(async (tx) => {
      const row = await this.repo.lockForPurge(tx, teamId);
      if (!row) return null;
      const threads = row.threadsDays !== null ? await this.chat.purgeThreads(tx, teamId, new Date(now.getTime() - row.threadsDays * DAY_MS)) : 0;
      const promptLogs = row.promptLogsDays !== null ? await purgePromptLogs(tx, teamId, new Date(now.getTime() - row.promptLogsDays * DAY_MS)) : 0;
      if (threads === 0 && promptLogs === 0) return null;
      await recordAudit(tx, {
        action: 'retention.purge',
        actor: null,
        teamId,
        target: { type: 'team', id: teamId },
        details: { threads, promptLogs, threadsDays: row.threadsDays, promptLogsDays: row.promptLogsDays },
      });
      return { teamId, threads, promptLogs };
    });
  }
}
