import { and, count, desc, eq, gte, like, lt, lte, or, type SQL } from 'drizzle-orm';
import type { Executor } from '../../db/client.js';
import { auditLog } from '../../db/schema/audit.js';
import { readableAuditSql, type AuditReader } from '../../policy/index.js';

export type AuditRow = typeof auditLog.$inferSelect;

export interface AuditFilter {
  /** whose entries: their team's, every team's for the instance admin (policy/audit.ts) */
  reader: AuditReader;
  from?: Date;
  to?: Date;
  /** an exact action, or a resource prefix such as `auth.` */
  action?: { exact: string } | { prefix: string };
  actorId?: number;
}

/** Reads of `audit_log` (the one writer is record.ts). Newest first, ties by id. */
export class AuditRepo {
  private where(f: AuditFilter): SQL | undefined {
    return and(
      readableAuditSql(f.reader, auditLog),
      f.from ? gte(auditLog.time, f.from) : undefined,
      f.to ? lte(auditLog.time, f.to) : undefined,
      f.action ? ('exact' in f.action ? eq(auditLog.action, f.action.exact) : like(auditLog.action, `${f.action.prefix}%`)) : undefined,
      f.actorId !== undefined ? eq(auditLog.actorUserId, f.actorId) : undefined,
    );
  }

  async count(db: Executor, f: AuditFilter): Promise<number> {
    const [row] = await db.select({ n: count() }).from(auditLog).where(this.where(f));
    return row?.n ?? 0;
  }

  list(db: Executor, f: AuditFilter, limit: number, offset: number): Promise<AuditRow[]> {
    return db.select().from(auditLog).where(this.where(f)).orderBy(desc(auditLog.time), desc(auditLog.id)).limit(limit).offset(offset);
  }

  /** The next `limit` entries after `after` in list order (keyset paging for the CSV stream). */
  listAfter(db: Executor, f: AuditFilter, after: { time: Date; id: string } | null, limit: number): Promise<AuditRow[]> {
    const keyset = after ? or(lt(auditLog.time, after.time), and(eq(auditLog.time, after.time), lt(auditLog.id, after.id))) : undefined;
    return db
      .select()
      .from(auditLog)
      .where(and(this.where(f), keyset))
      .orderBy(desc(auditLog.time), desc(auditLog.id))
      .limit(limit);
  }
}
