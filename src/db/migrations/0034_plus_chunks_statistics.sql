-- ANALYZE of plus_chunks skips its texts and tsvector (db/upkeep.ts, TABLE_RULES: the tsvectors'
-- lexeme counts were most of its cost; without them the planner takes its default selectivity
-- for @@, which keeps the GIN index its choice). A whole-table ANALYZE, so its change counter resets.
ALTER TABLE "plus_chunks" ALTER COLUMN "file_data" SET STATISTICS 0;--> statement-breakpoint
ALTER TABLE "plus_chunks" ALTER COLUMN "file_data_processed" SET STATISTICS 0;--> statement-breakpoint
ALTER TABLE "plus_chunks" ALTER COLUMN "search" SET STATISTICS 0;
