-- 0006 dropped and re-added plus_chunks.search (to index the headings with it), and the new
-- column took the default storage (EXTENDED): with a chunk's two texts beside it the row is
-- wider than TOAST's threshold, so its tsvector went to the TOAST table and every search read
-- it back through the TOAST index, row by row. Restore what 0001 set: the tsvector stays in the
-- heap row (compressed if need be); the raw text, which retrieval never reads, is the column
-- moved out. Applies to rows written from now on.
ALTER TABLE "plus_chunks" ALTER COLUMN "search" SET STORAGE MAIN;
