ALTER TABLE "plus_entries" ADD COLUMN "lexical_version" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
-- Every statement that inserts or deletes chunks raises the version of each entry it touched,
-- whichever code (or cascade, or hand-written SQL) runs it: an in-memory lexical index of an
-- entry (src/retrieval/lexical-index.ts) is used only while the entry's version is the one it
-- was built at. Statement-level, so a bulk insert costs one update per entry.
CREATE FUNCTION "plus_chunks_bump_lexical_version"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- "changed_rows": the statement's inserted rows, or its deleted ones (each trigger names its transition table so)
  UPDATE "plus_entries" SET "lexical_version" = "lexical_version" + 1 WHERE "id" IN (SELECT DISTINCT "plus_id" FROM "changed_rows");
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER "plus_chunks_inserted" AFTER INSERT ON "plus_chunks" REFERENCING NEW TABLE AS "changed_rows" FOR EACH STATEMENT EXECUTE FUNCTION "plus_chunks_bump_lexical_version"();
--> statement-breakpoint
CREATE TRIGGER "plus_chunks_deleted" AFTER DELETE ON "plus_chunks" REFERENCING OLD TABLE AS "changed_rows" FOR EACH STATEMENT EXECUTE FUNCTION "plus_chunks_bump_lexical_version"();
