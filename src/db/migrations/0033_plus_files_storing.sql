ALTER TABLE "plus_files" ADD COLUMN "storing" boolean DEFAULT false NOT NULL;--> statement-breakpoint
CREATE INDEX "plus_files_storing_idx" ON "plus_files" USING btree ("team_id") WHERE "plus_files"."storing";--> statement-breakpoint
-- Chunks written while their file is still storing are part of no entry yet: they raise no version
-- (the upload's last transaction raises it once). A chunk whose file is gone (a cascade) still does.
CREATE OR REPLACE FUNCTION "plus_chunks_bump_lexical_version"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE "plus_entries" SET "lexical_version" = "lexical_version" + 1
  WHERE ("team_id", "id") IN (
    SELECT DISTINCT c."team_id", c."plus_id" FROM "changed_rows" c
    LEFT JOIN "plus_files" f ON f."id" = c."file_id"
    WHERE f."storing" IS NOT TRUE);
  RETURN NULL;
END $$;
--> statement-breakpoint
-- ANALYZE samples 300 rows per unit of the largest statistics target: at the default (100) it read
-- 30,000 chunks, texts and vectors, ~0.5 s on the embedded database's only connection after every
-- large upload. The texts are never filtered on (no statistics); the rest is estimated from 3,000.
ALTER TABLE "plus_chunks" ALTER COLUMN "file_data" SET STATISTICS 0;--> statement-breakpoint
ALTER TABLE "plus_chunks" ALTER COLUMN "file_data_processed" SET STATISTICS 0;--> statement-breakpoint
ALTER TABLE "plus_chunks" ALTER COLUMN "heading" SET STATISTICS 0;--> statement-breakpoint
ALTER TABLE "plus_chunks" ALTER COLUMN "id" SET STATISTICS 10;--> statement-breakpoint
ALTER TABLE "plus_chunks" ALTER COLUMN "file_id" SET STATISTICS 10;--> statement-breakpoint
ALTER TABLE "plus_chunks" ALTER COLUMN "team_id" SET STATISTICS 10;--> statement-breakpoint
ALTER TABLE "plus_chunks" ALTER COLUMN "plus_id" SET STATISTICS 10;--> statement-breakpoint
ALTER TABLE "plus_chunks" ALTER COLUMN "idx" SET STATISTICS 10;--> statement-breakpoint
ALTER TABLE "plus_chunks" ALTER COLUMN "token_size" SET STATISTICS 10;--> statement-breakpoint
ALTER TABLE "plus_chunks" ALTER COLUMN "search" SET STATISTICS 10;
