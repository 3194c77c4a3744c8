-- Conversation search: English full text (the configuration retrieval uses) of each message and
-- of each thread's title, with GIN indexes. A message is indexed up to its first 100,000
-- characters, so that a tsvector never nears PostgreSQL's 1 MB limit (a turn must not fail on it).
-- The message's tsvector is kept in the heap row (STORAGE MAIN, compressed if need be; set in the
-- same statement, so the rewrite that fills the column already uses it): a search reads the vector
-- of every matching message, and one in TOAST costs a lookup each; the text, read only for the
-- page's snippets, is the column moved out when a row is too wide.
ALTER TABLE "chat_messages" ADD COLUMN "search" "tsvector" GENERATED ALWAYS AS (to_tsvector('english', left(content, 100000))) STORED, ALTER COLUMN "search" SET STORAGE MAIN;--> statement-breakpoint
ALTER TABLE "chat_threads" ADD COLUMN "search" "tsvector" GENERATED ALWAYS AS (to_tsvector('english', title)) STORED;--> statement-breakpoint
CREATE INDEX "chat_messages_search_idx" ON "chat_messages" USING gin ("search");--> statement-breakpoint
CREATE INDEX "chat_threads_search_idx" ON "chat_threads" USING gin ("search");
