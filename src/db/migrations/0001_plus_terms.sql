CREATE TABLE "plus_terms" (
	"plus_id" uuid NOT NULL,
	"lexeme" text NOT NULL,
	"df" integer NOT NULL,
	CONSTRAINT "plus_terms_plus_id_lexeme_pk" PRIMARY KEY("plus_id","lexeme")
);
--> statement-breakpoint
ALTER TABLE "plus_entries" ADD COLUMN "chunk_count" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "plus_terms" ADD CONSTRAINT "plus_terms_plus_id_plus_entries_id_fk" FOREIGN KEY ("plus_id") REFERENCES "public"."plus_entries"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
-- Added by hand (drizzle does not model storage): keep a chunk's tsvector (which the search ranks) and processed text (which it returns) in the heap row; the raw text, which retrieval never reads, is the column moved to TOAST when a row is too wide. Applies to rows written from now on.
ALTER TABLE "plus_chunks" ALTER COLUMN "search" SET STORAGE MAIN;--> statement-breakpoint
ALTER TABLE "plus_chunks" ALTER COLUMN "file_data_processed" SET STORAGE MAIN;--> statement-breakpoint
-- Backfill (added by hand to the generated migration): document frequencies and chunk counts of the entries that already exist.
INSERT INTO "plus_terms" ("plus_id", "lexeme", "df")
SELECT c."plus_id", l."lexeme", count(*)::integer
FROM "plus_chunks" c
CROSS JOIN LATERAL unnest(tsvector_to_array(c."search")) AS l("lexeme")
WHERE c."plus_id" IN (SELECT "id" FROM "plus_entries")
GROUP BY c."plus_id", l."lexeme";--> statement-breakpoint
UPDATE "plus_entries" e SET "chunk_count" = s."n"
FROM (SELECT "plus_id", count(*)::integer AS "n" FROM "plus_chunks" GROUP BY "plus_id") s
WHERE s."plus_id" = e."id";
