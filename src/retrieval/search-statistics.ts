/**
 * The planner's view of `plus_chunks.search` on the embedded database: its commonest lexemes and
 * how many chunks hold each, written from plus_terms (the exact document frequencies the ranking
 * keeps) instead of sampled by ANALYZE.
 *
 * Why: a large search reads its candidates' ids in windows of chunk ids (RetrievalRepo), which is
 * only cheaper when the planner intersects the GIN index's matches with the primary key's range
 * (BitmapAnd). Without statistics it takes 0.5 % of the table for each lexeme, so two lexemes
 * ANDed look like 2 rows, and it checks the range on every candidate's row instead — each
 * window as long as the whole statement. ANALYZE skips `search` (migration 0034: its lexeme
 * counts were most of the cost of analysing the table), and sampling 300 rows per unit of
 * statistics target would need thousands of rows to see the lexemes that matter. So the
 * statistics come from plus_terms, in one statement that upkeep sends in a lull after it analyses
 * plus_chunks (ANALYZE leaves a column it skips as it is).
 *
 * Only while plus_chunks holds more than `above` chunks (FEATURE_READS.splitAbove, the size at
 * which a search reads in windows at all): below it the element statistics are cleared, so small
 * instances plan as they always did. PostgreSQL ≥ 18 (pg_restore_attribute_stats; PGlite
 * 0.5 is 18): upkeep runs on the embedded database only, and a PostgreSQL server's searches read
 * in one statement when its planner does not intersect the windows (RetrievalRepo).
 */
import { sql } from 'drizzle-orm';
import type { Executor } from '../db/client.js';
import { execute } from '../db/driver.js';

/** As many lexemes as ANALYZE keeps at the default statistics target (10 × 100). */
export const SEARCH_STATISTICS_LEXEMES = 1_000;

/**
 * Writes (or clears) `search`'s element statistics: the SEARCH_STATISTICS_LEXEMES lexemes held by
 * the most chunks, each with the share of the table's chunks holding it (the sum of its
 * entries' df over pg_class.reltuples, just set by ANALYZE), in the order the planner's lookup
 * needs (byte length, then bytes), then the least and greatest share.
 */
export async function refreshSearchStatistics(db: Executor, above: number): Promise<'written' | 'cleared'> {
  const { rows } = await execute<{ chunks: number }>(
    db,
    sql`select greatest(c.reltuples, 0)::float8 as chunks from pg_class c where c.oid = 'plus_chunks'::regclass`,
  );
  const chunks = Number(rows[0]?.chunks ?? 0);
  if (chunks <= above) {
    await execute(db, sql`select pg_clear_attribute_stats('public', 'plus_chunks', 'search', false)`);
    return 'cleared';
  }
  await execute(
    db,
    sql`
    with top as (
      select t.lexeme, least(1, sum(t.df) / ${chunks}::float8)::real as share
      from plus_terms t group by t.lexeme order by sum(t.df) desc limit ${SEARCH_STATISTICS_LEXEMES}
    )
    select pg_restore_attribute_stats(
      'schemaname', 'public', 'relname', 'plus_chunks', 'attname', 'search', 'inherited', false,
      'null_frac', 0::real,
      'most_common_elems', (select array_agg(lexeme order by octet_length(lexeme), lexeme collate "C")::text from top),
      'most_common_elem_freqs', (select array_agg(share order by octet_length(lexeme), lexeme collate "C") || array[min(share), max(share)] from top))
    where exists (select from top)`,
  );
  return 'written';
}
