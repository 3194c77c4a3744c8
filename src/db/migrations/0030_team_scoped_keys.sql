ALTER TABLE "team_models" DROP CONSTRAINT "team_models_model_id_models_id_fk";
--> statement-breakpoint
ALTER TABLE "workspace_mcp_servers" DROP CONSTRAINT "workspace_mcp_servers_workspace_id_workspaces_id_fk";
--> statement-breakpoint
ALTER TABLE "workspace_models" DROP CONSTRAINT "workspace_models_workspace_id_workspaces_id_fk";
--> statement-breakpoint
ALTER TABLE "workspace_models" DROP CONSTRAINT "workspace_models_model_id_models_id_fk";
--> statement-breakpoint
ALTER TABLE "workspace_plus" DROP CONSTRAINT "workspace_plus_workspace_id_workspaces_id_fk";
--> statement-breakpoint
ALTER TABLE "workspace_plus" DROP CONSTRAINT "workspace_plus_plus_id_plus_entries_id_fk";
--> statement-breakpoint
ALTER TABLE "chat_threads" DROP CONSTRAINT "chat_threads_workspace_id_workspaces_id_fk";
--> statement-breakpoint
ALTER TABLE "plus_files" DROP CONSTRAINT "plus_files_plus_id_plus_entries_id_fk";
--> statement-breakpoint
ALTER TABLE "plus_terms" DROP CONSTRAINT "plus_terms_plus_id_plus_entries_id_fk";
--> statement-breakpoint
ALTER TABLE "team_embedding_models" DROP CONSTRAINT "team_embedding_models_model_id_models_id_fk";
--> statement-breakpoint
ALTER TABLE "team_rerank_models" DROP CONSTRAINT "team_rerank_models_model_id_models_id_fk";
--> statement-breakpoint
DROP INDEX "workspaces_team_idx";--> statement-breakpoint
DROP INDEX "plus_entries_team_idx";--> statement-breakpoint
DROP INDEX "workspace_plus_plus_idx";--> statement-breakpoint
DROP INDEX "chat_threads_ws_idx";--> statement-breakpoint
DROP INDEX "plus_chunks_plus_idx";--> statement-breakpoint
DROP INDEX "plus_files_plus_idx";--> statement-breakpoint
DROP INDEX "plus_chunk_vectors_plus_idx";--> statement-breakpoint
ALTER TABLE "workspace_mcp_servers" DROP CONSTRAINT "workspace_mcp_servers_workspace_id_server_id_pk";--> statement-breakpoint
ALTER TABLE "workspace_models" DROP CONSTRAINT "workspace_models_workspace_id_model_id_pk";--> statement-breakpoint
ALTER TABLE "workspace_plus" DROP CONSTRAINT "workspace_plus_workspace_id_plus_id_pk";--> statement-breakpoint
ALTER TABLE "plus_terms" DROP CONSTRAINT "plus_terms_plus_id_lexeme_pk";--> statement-breakpoint
ALTER TABLE "models" DROP CONSTRAINT "models_pkey";--> statement-breakpoint
ALTER TABLE "team_models" ALTER COLUMN "model_scope" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "workspace_mcp_servers" ALTER COLUMN "team_id" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "workspace_models" ALTER COLUMN "team_id" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "workspace_models" ALTER COLUMN "model_scope" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "workspace_plus" ALTER COLUMN "team_id" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "workspaces" DROP CONSTRAINT "workspaces_pkey";--> statement-breakpoint
ALTER TABLE "plus_chunks" ALTER COLUMN "team_id" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "plus_entries" DROP CONSTRAINT "plus_entries_pkey";--> statement-breakpoint
ALTER TABLE "plus_files" ALTER COLUMN "team_id" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "plus_terms" ALTER COLUMN "team_id" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "plus_chunk_vectors" ALTER COLUMN "team_id" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "team_embedding_models" ALTER COLUMN "model_scope" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "team_rerank_models" ALTER COLUMN "model_scope" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "models" ADD COLUMN "scope" uuid GENERATED ALWAYS AS (coalesce(team_id, '00000000-0000-0000-0000-000000000000'::uuid)) STORED NOT NULL;--> statement-breakpoint
ALTER TABLE "models" ADD CONSTRAINT "models_scope_id_pk" PRIMARY KEY("scope","id");--> statement-breakpoint
ALTER TABLE "workspace_mcp_servers" ADD CONSTRAINT "workspace_mcp_servers_team_id_workspace_id_server_id_pk" PRIMARY KEY("team_id","workspace_id","server_id");--> statement-breakpoint
ALTER TABLE "workspace_models" ADD CONSTRAINT "workspace_models_team_id_workspace_id_model_id_pk" PRIMARY KEY("team_id","workspace_id","model_id");--> statement-breakpoint
ALTER TABLE "workspace_plus" ADD CONSTRAINT "workspace_plus_team_id_workspace_id_plus_id_pk" PRIMARY KEY("team_id","workspace_id","plus_id");--> statement-breakpoint
ALTER TABLE "workspaces" ADD CONSTRAINT "workspaces_team_id_id_pk" PRIMARY KEY("team_id","id");--> statement-breakpoint
ALTER TABLE "plus_entries" ADD CONSTRAINT "plus_entries_team_id_id_pk" PRIMARY KEY("team_id","id");--> statement-breakpoint
ALTER TABLE "plus_terms" ADD CONSTRAINT "plus_terms_team_id_plus_id_lexeme_pk" PRIMARY KEY("team_id","plus_id","lexeme");--> statement-breakpoint
ALTER TABLE "team_models" ADD CONSTRAINT "team_models_model_scope_model_id_models_scope_id_fk" FOREIGN KEY ("model_scope","model_id") REFERENCES "public"."models"("scope","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "workspace_mcp_servers" ADD CONSTRAINT "workspace_mcp_servers_team_id_workspace_id_workspaces_team_id_id_fk" FOREIGN KEY ("team_id","workspace_id") REFERENCES "public"."workspaces"("team_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "workspace_models" ADD CONSTRAINT "workspace_models_team_id_workspace_id_workspaces_team_id_id_fk" FOREIGN KEY ("team_id","workspace_id") REFERENCES "public"."workspaces"("team_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "workspace_models" ADD CONSTRAINT "workspace_models_model_scope_model_id_models_scope_id_fk" FOREIGN KEY ("model_scope","model_id") REFERENCES "public"."models"("scope","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "workspace_plus" ADD CONSTRAINT "workspace_plus_team_id_workspace_id_workspaces_team_id_id_fk" FOREIGN KEY ("team_id","workspace_id") REFERENCES "public"."workspaces"("team_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "workspace_plus" ADD CONSTRAINT "workspace_plus_team_id_plus_id_plus_entries_team_id_id_fk" FOREIGN KEY ("team_id","plus_id") REFERENCES "public"."plus_entries"("team_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "chat_threads" ADD CONSTRAINT "chat_threads_team_id_workspace_id_workspaces_team_id_id_fk" FOREIGN KEY ("team_id","workspace_id") REFERENCES "public"."workspaces"("team_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "plus_files" ADD CONSTRAINT "plus_files_team_id_plus_id_plus_entries_team_id_id_fk" FOREIGN KEY ("team_id","plus_id") REFERENCES "public"."plus_entries"("team_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "plus_terms" ADD CONSTRAINT "plus_terms_team_id_plus_id_plus_entries_team_id_id_fk" FOREIGN KEY ("team_id","plus_id") REFERENCES "public"."plus_entries"("team_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "team_embedding_models" ADD CONSTRAINT "team_embedding_models_model_scope_model_id_models_scope_id_fk" FOREIGN KEY ("model_scope","model_id") REFERENCES "public"."models"("scope","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "team_rerank_models" ADD CONSTRAINT "team_rerank_models_model_scope_model_id_models_scope_id_fk" FOREIGN KEY ("model_scope","model_id") REFERENCES "public"."models"("scope","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "workspace_plus_plus_idx" ON "workspace_plus" USING btree ("team_id","plus_id");--> statement-breakpoint
CREATE INDEX "chat_threads_ws_idx" ON "chat_threads" USING btree ("team_id","workspace_id","updated");--> statement-breakpoint
CREATE INDEX "plus_chunks_plus_idx" ON "plus_chunks" USING btree ("team_id","plus_id");--> statement-breakpoint
CREATE INDEX "plus_files_plus_idx" ON "plus_files" USING btree ("team_id","plus_id");--> statement-breakpoint
CREATE INDEX "plus_chunk_vectors_plus_idx" ON "plus_chunk_vectors" USING btree ("team_id","plus_id","model_id");--> statement-breakpoint
ALTER TABLE "team_models" ADD CONSTRAINT "team_models_scope_ck" CHECK ("team_models"."model_scope" = "team_models"."team_id" or "team_models"."model_scope" = '00000000-0000-0000-0000-000000000000'::uuid);--> statement-breakpoint
ALTER TABLE "workspace_models" ADD CONSTRAINT "workspace_models_scope_ck" CHECK ("workspace_models"."model_scope" = "workspace_models"."team_id" or "workspace_models"."model_scope" = '00000000-0000-0000-0000-000000000000'::uuid);--> statement-breakpoint
ALTER TABLE "team_embedding_models" ADD CONSTRAINT "team_embedding_models_scope_ck" CHECK ("team_embedding_models"."model_scope" = "team_embedding_models"."team_id" or "team_embedding_models"."model_scope" = '00000000-0000-0000-0000-000000000000'::uuid);--> statement-breakpoint
ALTER TABLE "team_rerank_models" ADD CONSTRAINT "team_rerank_models_scope_ck" CHECK ("team_rerank_models"."model_scope" = "team_rerank_models"."team_id" or "team_rerank_models"."model_scope" = '00000000-0000-0000-0000-000000000000'::uuid);