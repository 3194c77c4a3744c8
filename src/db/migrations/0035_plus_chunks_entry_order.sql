-- An entry's first chunk id in one index lookup: the lexical index build starts its pages there
-- (from 0, the planner walked the primary key past every older entry's chunks).
DROP INDEX "plus_chunks_plus_idx";--> statement-breakpoint
CREATE INDEX "plus_chunks_plus_idx" ON "plus_chunks" USING btree ("team_id","plus_id","id");