import type { Readable } from 'node:stream';
import { csvStream } from '../../csv.js';
import type { Db } from '../../db/client.js';
import { badRequest, forbidden } from '../../errors.js';
import { toPage } from '../../http/paging.js';
import { filterDetails, recordAudit, type Actor } from './record.js';
import { mayReadAuditLog } from '../../policy/index.js';
import { AuditRepo, type AuditFilter, type AuditRow } from './repo.js';
import type { AuditEntryT, AuditFilterQuery } from './schema.js';

/** Who reads the log: a teams Principal fits as it is. */
export interface AuditReader extends Actor {
  teamId: string;
  userId: number;
  role: 'owner' | 'admin' | 'member';
  instanceAdmin: boolean;
}

const CSV_COLUMNS = ['id', 'time', 'teamId', 'actorUserId', 'actorApiKeyId', 'actorIp', 'action', 'targetType', 'targetId', 'outcome', 'details'] as const;
/** Entries per read of the CSV export, which goes through Database.bulk (as the prompt-log export: it gives way to chat turns). */
const CSV_BATCH = 500;

export function auditView(r: AuditRow): AuditEntryT {
  return {
    id: r.id,
    time: r.time.toISOString(),
    teamId: r.teamId,
    actor: { userId: r.actorUserId, apiKeyId: r.actorApiKeyId, ip: r.actorIp },
    action: r.action,
    target: r.targetType !== null && r.targetId !== null ? { type: r.targetType, id: r.targetId } : null,
    outcome: r.outcome,
    details: r.details,
  };
}

/**
 * Reading the audit log: a team's owner/admin reads their team's entries, the instance admin
 * every entry (also those of no team, such as failed sign-ins for unknown emails); a member none.
 */
export class AuditService {
  private readonly repo = new AuditRepo();

  constructor(
    private readonly db: Db,
    /** for the CSV export's reads (Database.bulk) */
    private readonly bulk: Db = db,
  ) {}

  private filter(reader: AuditReader, q: AuditFilterQuery): AuditFilter {
    if (!mayReadAuditLog(reader)) throw forbidden('Only a team owner or admin may read the audit log');
    const from = q.from ? new Date(q.from) : undefined;
    const to = q.to ? new Date(q.to) : undefined;
    if (from && to && from > to) throw badRequest('validation_failed', 'from must not be after to', [{ path: 'querystring/from', message: 'is after to' }]);
    const action = q.action?.endsWith('.*')
      ? { prefix: q.action.slice(0, -1) }
      : q.action?.includes('.')
        ? { exact: q.action }
        : q.action
          ? { prefix: `${q.action}.` }
          : undefined;
    return {
      reader,
      ...(from ? { from } : {}),
      ...(to ? { to } : {}),
      ...(action ? { action } : {}),
      ...(q.actorId !== undefined ? { actorId: q.actorId } : {}),
    };
  }

  async page(reader: AuditReader, q: AuditFilterQuery & { page: number; size: number }) {
    const f = this.filter(reader, q);
    const [total, rows] = await Promise.all([this.repo.count(this.db, f), this.repo.list(this.db, f, q.size, q.page * q.size)]);
    return toPage(rows.map(auditView), total, q);
  }

  /** The CSV export, streamed in keyset batches; the export itself is recorded (`export.audit`) before the first row is read. */
  async csv(reader: AuditReader, q: AuditFilterQuery): Promise<Readable> {
    const f = this.filter(reader, q);
    await recordAudit(this.db, { action: 'export.audit', actor: reader, details: filterDetails(q) });
    const { bulk, repo } = this;
    async function* rows() {
      let after: { time: Date; id: string } | null = null;
      for (;;) {
        const batch = await repo.listAfter(bulk, f, after, CSV_BATCH);
        for (const r of batch) {
          yield [r.id, r.time, r.teamId, r.actorUserId, r.actorApiKeyId, r.actorIp, r.action, r.targetType, r.targetId, r.outcome, JSON.stringify(r.details)];
        }
        const last = batch.at(-1);
        if (!last || batch.length < CSV_BATCH) return;
        after = { time: last.time, id: last.id };
      }
    }
    return csvStream(CSV_COLUMNS, rows());
  }
}
