-- Conversation search: English full text (the configuration retrieval uses) of each message and
-- of each thread's title, with GIN indexes. A message is indexed up to its first 100,000
-- characters, so that a tsvector never nears PostgreSQL's 1 MB limit (a turn must not fail on it).
ALTER TABLE "chat_messages" ADD COLUMN "search" "tsvector" GENERATED ALWAYS AS (to_tsvector('english', left(content, 100000))) STORED;--> statement-breakpoint
ALTER TABLE "chat_threads" ADD COLUMN "search" "tsvector" GENERATED ALWAYS AS (to_tsvector('english', title)) STORED;--> statement-breakpoint
CREATE INDEX "chat_messages_search_idx" ON "chat_messages" USING gin ("search");--> statement-breakpoint
CREATE INDEX "chat_threads_search_idx" ON "chat_threads" USING gin ("search");
