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
