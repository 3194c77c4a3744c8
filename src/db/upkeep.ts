import { sql } from 'drizzle-orm';
import type { Database, Db } from './client.js';
import { execute } from './driver.js';

/**
 * Upkeep of the embedded database: what PostgreSQL's autovacuum does on a server. PGlite runs
 * PostgreSQL in single-user mode, where no autovacuum runs, so nothing ever analyses or vacuums
 * its tables: the planner keeps estimates (and prepared statements the plans) made when the
 * tables were small. Measured on PGlite: a follow-up turn's first statement took 4 ms on a fresh
 * database, 0.5 s once 20,000 more messages were stored and 2 s with 60,000 — and 4 ms again after
 * one ANALYZE. Dead rows from updates and GIN indexes' pending lists also grew without end.
 *
 * From the counters PostgreSQL keeps per table (pg_stat_user_tables), with autovacuum's own
 * default thresholds: VACUUM ANALYZE a table with more dead rows than 50 + 20 % of its live ones,
 * or more rows inserted since its last vacuum than 1,000 + 20 % (which also merges GIN pending
 * lists); ANALYZE one with more rows changed since its last analysis than 50 + 10 %, or that was
 * never analysed and holds pages (TABLE_RULES: plus_chunks otherwise). One table at a time, each
 * a statement on the database's one connection, sent in a lull (UPKEEP_LULL) through
 * Database.bulk (giving way to requests').
 * PostgreSQL servers run autovacuum themselves: this runs on PGlite only.
 */
export const UPKEEP_EVERY_MS = 60_000;

/**
 * Before each VACUUM or ANALYZE, upkeep waits for the database to have run nothing for
 * `quietMs`, or `atMostMs` at most (Database.lull, the embedded database on its own thread):
 * one such statement takes 30–70 ms on a busy 2-core machine, as long as a chat turn, and it
 * cannot be interrupted. Under a steady load a table's statistics are at most ~5 minutes late.
 */
export const UPKEEP_LULL = { quietMs: 50, atMostMs: 300_000 };

/** How a table is kept otherwise than by the thresholds alone. */
export interface TableRule {
  /** whether rows inserted since the last vacuum are reason to vacuum it (dead rows always are) */
  vacuumOnInsert: boolean;
  /** ANALYZE's statistics target (300 sampled rows per unit; the others' is 10) */
  statisticsTarget: number;
}

/**
 * plus_chunks is written in bulk (an 18 MB upload adds 19,000 rows of ~3 KB) and read through
 * its GIN index and by id, never by an index-only scan; the store merges the GIN pending list
 * itself. Measured on 20,000 such chunks: the insert-triggered VACUUM took 176 ms (setting the
 * visibility map over every new page) and ANALYZE 100 ms (the tsvectors' lexeme counts), 29 ms
 * without the text and tsvector columns (migration 0034 sets their statistics target to 0:
 * ANALYZE skips them, and stays a whole-table one, which resets the table's change counter),
 * still ~0.1 s during an upload, whose rows put about two on a page: each sampled row is a page
 * read. So it samples 900 rows (target 3), enough for the planner's view of how chunks spread
 * over entries and files. Each is one statement on the one connection every chat turn needs.
 * Without statistics on `search` the planner takes its default selectivity for `@@` (0.5 %),
 * which keeps the GIN index its choice for a question's terms, as wanted; once the table is
 * large, the application writes them from plus_terms after this analyses it
 * (retrieval/search-statistics.ts).
 */
export const TABLE_RULES: Readonly<Record<string, TableRule>> = {
  plus_chunks: { vacuumOnInsert: false, statisticsTarget: 3 },
};

interface TableStats {
  name: string;
  live: number;
  dead: number;
  changed: number;
  inserted: number;
  never: boolean;
}

export async function upkeep(
  db: Db,
  rules: Readonly<Record<string, TableRule>> = TABLE_RULES,
  /** Database.lull, awaited with UPKEEP_LULL before each VACUUM and ANALYZE (none: they run at once) */
  lull?: Database['lull'],
): Promise<{ analyzed: string[]; vacuumed: string[] }> {
  const inLull = async () => lull?.(UPKEEP_LULL.quietMs, UPKEEP_LULL.atMostMs);
  // The counters reach the shared statistics when the session next reports them: now.
  await execute(db, sql`select pg_stat_force_next_flush()`);
  const { rows } = await execute<TableStats>(
    db,
    sql`select s.relname as name, s.n_live_tup::float8 as live, s.n_dead_tup::float8 as dead,
          s.n_mod_since_analyze::float8 as changed, s.n_ins_since_vacuum::float8 as inserted,
          (c.reltuples < 0 and pg_relation_size(c.oid) > 0) or (s.last_analyze is null and s.last_autoanalyze is null and s.n_live_tup > 0) as never
        from pg_stat_user_tables s join pg_class c on c.oid = s.relid
        where s.schemaname = 'public'
        order by s.relname`,
  );
  const analyzed: string[] = [];
  const vacuumed: string[] = [];
  for (const t of rows) {
    const live = Math.max(0, Number(t.live));
    const rule = rules[t.name];
    const vacuum = Number(t.dead) > 50 + 0.2 * live || ((rule?.vacuumOnInsert ?? true) && Number(t.inserted) > 1000 + 0.2 * live);
    const analyze = vacuum || t.never || Number(t.changed) > 50 + 0.1 * live;
    if (!analyze) continue;
    const table = sql.identifier(t.name);
    if (vacuum) {
      await inLull();
      await execute(db, sql`vacuum ${table}`);
    }
    await inLull();
    // ANALYZE samples 300 rows per unit of statistics target: at the default (100), 30,000 rows,
    // 0.4-0.5 s for 100,000 prompt logs or 20,000 chunks on the one connection every chat turn
    // needs; at 10, 3,000 rows (50-65 ms). SET LOCAL: for this statement's transaction only.
    await db.transaction(async (tx) => {
      await execute(tx, sql`set local default_statistics_target = ${sql.raw(String(rule?.statisticsTarget ?? 10))}`);
      await execute(tx, sql`analyze ${table}`);
    });
    analyzed.push(t.name);
    if (vacuum) vacuumed.push(t.name);
  }
  return { analyzed, vacuumed };
}
