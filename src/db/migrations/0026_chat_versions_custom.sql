-- Versions: every message stored before them becomes one linear path. Each message's parent is
-- the message before it in its thread (by insertion order), and each thread's active leaf its
-- newest message; a thread then lists, and continues, exactly as it did.
UPDATE "chat_messages" m SET "parent_id" = p."prev"
FROM (SELECT "id", lag("id") OVER (PARTITION BY "thread_id" ORDER BY "seq") AS "prev" FROM "chat_messages") p
WHERE p."id" = m."id" AND p."prev" IS NOT NULL;--> statement-breakpoint
UPDATE "chat_threads" t SET "active_message_id" = (
  SELECT m."id" FROM "chat_messages" m WHERE m."thread_id" = t."id" ORDER BY m."seq" DESC LIMIT 1
);
