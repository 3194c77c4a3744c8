-- Ids unique per team: every row that refers to a workspace, a Plus entry or a model carries the
-- team (or, for a model, its scope: the team's id, or the nil uuid for a system model) it is
-- keyed under. Ids were global until now, so each row takes its parent's.
UPDATE "workspace_models" wm SET "team_id" = w."team_id" FROM "workspaces" w WHERE w."id" = wm."workspace_id";--> statement-breakpoint
UPDATE "workspace_models" wm SET "model_scope" = coalesce(m."team_id", '00000000-0000-0000-0000-000000000000') FROM "models" m WHERE m."id" = wm."model_id";--> statement-breakpoint
UPDATE "workspace_plus" wp SET "team_id" = w."team_id" FROM "workspaces" w WHERE w."id" = wp."workspace_id";--> statement-breakpoint
UPDATE "workspace_mcp_servers" wm SET "team_id" = w."team_id" FROM "workspaces" w WHERE w."id" = wm."workspace_id";--> statement-breakpoint
UPDATE "plus_files" f SET "team_id" = p."team_id" FROM "plus_entries" p WHERE p."id" = f."plus_id";--> statement-breakpoint
UPDATE "plus_terms" t SET "team_id" = p."team_id" FROM "plus_entries" p WHERE p."id" = t."plus_id";--> statement-breakpoint
UPDATE "plus_chunk_vectors" v SET "team_id" = f."team_id" FROM "plus_files" f WHERE f."id" = v."file_id";--> statement-breakpoint
-- chunks: the trigger below runs on insert and delete only, so this update raises no version
UPDATE "plus_chunks" c SET "team_id" = f."team_id" FROM "plus_files" f WHERE f."id" = c."file_id";--> statement-breakpoint
UPDATE "team_models" tm SET "model_scope" = coalesce(m."team_id", '00000000-0000-0000-0000-000000000000') FROM "models" m WHERE m."id" = tm."model_id";--> statement-breakpoint
UPDATE "team_embedding_models" tm SET "model_scope" = coalesce(m."team_id", '00000000-0000-0000-0000-000000000000') FROM "models" m WHERE m."id" = tm."model_id";--> statement-breakpoint
UPDATE "team_rerank_models" tm SET "model_scope" = coalesce(m."team_id", '00000000-0000-0000-0000-000000000000') FROM "models" m WHERE m."id" = tm."model_id";--> statement-breakpoint
-- a vector whose chunk is gone (no foreign key to its file) has no team: it is of no use
DELETE FROM "plus_chunk_vectors" WHERE "team_id" IS NULL;--> statement-breakpoint
-- an entry's lexical version is raised for the entry of the chunk's team, not every team's entry of that id
CREATE OR REPLACE FUNCTION "plus_chunks_bump_lexical_version"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE "plus_entries" SET "lexical_version" = "lexical_version" + 1
  WHERE ("team_id", "id") IN (SELECT DISTINCT "team_id", "plus_id" FROM "changed_rows");
  RETURN NULL;
END $$;
