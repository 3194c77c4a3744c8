import { recordAudit } from '../audit/record.js';
import type { Readable } from 'node:stream';
import { csvStream } from '../../csv.js';
import type { Db } from '../../db/client.js';
import { AppError, badRequest } from '../../errors.js';
import { pageRequest, toPage } from '../../http/paging.js';
import { withoutUpstreamDetail } from '../../providers/errors.js';
import { mayReadUpstreamDetail, type Principal } from '../../policy/index.js';
import type { PromptLogT } from './schema.js';
import { PromptLogsRepo, SORTABLE, type LogFilter, type PendingLog, type PromptLogView } from './repo.js';

const CSV_COLUMNS = [
  'id',
  'created',
  'userId',
  'workspaceId',
  'threadId',
  'modelId',
  'modelName',
  'prompt',
  'response',
  'promptTokens',
  'completionTokens',
  'latencyMs',
  'status',
  'error',
] as const;

/**
 * Rows per read of the CSV export. On the embedded database every other statement waits for the
 * read in progress (one connection). With 500 rows, chat turns during a 100,000-log export waited
 * 143 ms at p50; with 100 they wait 12 ms (BENCHMARKS.md, event loop). A read of 100 rows alone
 * takes ~2.4 ms (up to ~90 ms on a loaded 2-core machine), so the reads go through Database.bulk:
 * sent when no chat turn's statement is waiting.
 */
const CSV_BATCH = 100;

/** The provider's own status and error code (`[upstream …]` in `error`) are shown to team owners/admins only. */
function forReader(r: PromptLogView, admin: boolean): PromptLogView {
  return admin ? r : { ...r, error: withoutUpstreamDetail(r.error) };
}

function logView(r: PromptLogView): PromptLogT {
  return { ...r, created: r.created.toISOString() };
}

/** Margin beyond the provider's total timeout before a `pending` log is taken for abandoned. */
export const SWEEP_MARGIN_MS = 60_000;

export interface PromptLogsOptions {
  /** largest range answered by `range` */
  maxRows: number;
  /** a log `pending` longer than this belongs to no running request (provider total timeout + margin) */
  staleAfterMs: number;
}

export class PromptLogsService {
  private readonly repo = new PromptLogsRepo();

  constructor(
    private readonly db: Db,
    private readonly opts: PromptLogsOptions,
    /** for the CSV export's reads (Database.bulk: they give way to chat turns on the embedded database) */
    private readonly bulk: Db = db,
  ) {}

  /**
   * Finish logs left `pending` by a request that cannot still be running (a crash, a lost
   * write): they become `interrupted` with a reason. Every node may run it at any time.
   */
  async sweep(now = new Date()): Promise<number> {
    const before = new Date(now.getTime() - this.opts.staleAfterMs);
    return this.repo.sweepStale(
      this.db,
      before,
      `abandoned: no answer was recorded within ${Math.round(this.opts.staleAfterMs / 1000)} s (server stopped or write lost)`,
    );
  }

  /** Finish a pending log as failed, when its turn stopped without storing an answer. */
  async fail(id: string, latencyMs: number, reason: string): Promise<void> {
    await this.repo.finish(this.db, id, { response: null, promptTokens: null, completionTokens: null, latencyMs, status: 'error', error: reason });
  }

  /** The same for a turn whose log was never written (one written whole, chat's TurnStore.deferUserTurn): its log, finished as failed. */
  async failUnwritten(log: PendingLog, latencyMs: number, reason: string): Promise<void> {
    await this.repo.insertFailed(this.db, log, latencyMs, reason);
  }

  private filter(caller: Principal, q: { q?: string | undefined; startDate?: string | undefined; endDate?: string | undefined }): LogFilter {
    const start = q.startDate ? new Date(q.startDate) : undefined;
    const end = q.endDate ? new Date(q.endDate) : undefined;
    if (start && end && start > end) {
      throw badRequest('validation_failed', 'startDate must not be after endDate', [{ path: 'querystring/startDate', message: 'is after endDate' }]);
    }
    return {
      reader: caller,
      ...(q.q ? { q: q.q } : {}),
      ...(start ? { start } : {}),
      ...(end ? { end } : {}),
    };
  }

  /** All logs in a date range, newest first; refuses ranges larger than the configured bound. */
  async range(caller: Principal, q: { q?: string; startDate: string; endDate: string }) {
    const f = this.filter(caller, q);
    const total = await this.repo.count(this.db, f);
    if (total > this.opts.maxRows) {
      throw new AppError(
        'bad_request',
        'too_many_rows',
        `The range holds ${total} logs, more than ${this.opts.maxRows}: narrow it or use GET /api/v1/chat/prompt-logs/paged or /csv`,
      );
    }
    return (await this.repo.list(this.db, f, { limit: this.opts.maxRows, offset: 0, sort: [] })).map((r) =>
      logView(forReader(r, mayReadUpstreamDetail(caller))),
    );
  }

  async paged(caller: Principal, q: { q?: string; startDate?: string; endDate?: string; page: number; size: number; sort?: string[] }) {
    const f = this.filter(caller, q);
    const p = pageRequest(q, SORTABLE);
    const [total, rows] = await Promise.all([
      this.repo.count(this.db, f),
      this.repo.list(this.db, f, { limit: p.size, offset: p.page * p.size, sort: p.sort }),
    ]);
    return toPage(
      rows.map((r) => logView(forReader(r, mayReadUpstreamDetail(caller)))),
      total,
      p,
    );
  }

  /** The CSV export as a stream: rows are read in keyset batches, so memory does not grow with rows. */
  async csv(caller: Principal, q: { q?: string; startDate: string; endDate: string }): Promise<Readable> {
    const f = this.filter(caller, q);
    // The search words are not recorded: they are prompt text.
    await recordAudit(this.db, {
      action: 'export.prompt_logs',
      actor: caller,
      details: { startDate: q.startDate, endDate: q.endDate, searched: q.q !== undefined },
    });
    const { bulk, repo } = this;
    const admin = mayReadUpstreamDetail(caller);
    async function* rows() {
      let after: { cursor: string; id: string } | null = null;
      for (;;) {
        const batch = await repo.listAfter(bulk, f, after, CSV_BATCH);
        for (const r of batch) {
          const row = forReader(r, admin);
          yield CSV_COLUMNS.map((c) => row[c]);
        }
        const last = batch.at(-1);
        if (!last || batch.length < CSV_BATCH) return;
        after = { cursor: last.cursor, id: last.id };
      }
    }
    return csvStream(CSV_COLUMNS, rows());
  }
}
