ALTER TABLE "team_models" ADD COLUMN "model_scope" uuid;--> statement-breakpoint
ALTER TABLE "workspace_mcp_servers" ADD COLUMN "team_id" uuid;--> statement-breakpoint
ALTER TABLE "workspace_models" ADD COLUMN "team_id" uuid;--> statement-breakpoint
ALTER TABLE "workspace_models" ADD COLUMN "model_scope" uuid;--> statement-breakpoint
ALTER TABLE "workspace_plus" ADD COLUMN "team_id" uuid;--> statement-breakpoint
ALTER TABLE "plus_chunks" ADD COLUMN "team_id" uuid;--> statement-breakpoint
ALTER TABLE "plus_files" ADD COLUMN "team_id" uuid;--> statement-breakpoint
ALTER TABLE "plus_terms" ADD COLUMN "team_id" uuid;--> statement-breakpoint
ALTER TABLE "plus_chunk_vectors" ADD COLUMN "team_id" uuid;--> statement-breakpoint
ALTER TABLE "team_embedding_models" ADD COLUMN "model_scope" uuid;--> statement-breakpoint
ALTER TABLE "team_rerank_models" ADD COLUMN "model_scope" uuid;