-- Dropping plus_chunks.search (0005, to index the chunk's headings with it) dropped its GIN
-- index; drizzle-kit still lists it in its snapshot, so it is rebuilt here by hand.
CREATE INDEX IF NOT EXISTS "plus_chunks_search_idx" ON "plus_chunks" USING gin ("search");
