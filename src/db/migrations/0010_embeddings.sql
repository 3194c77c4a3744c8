CREATE TABLE "plus_chunk_vectors" (
	"chunk_id" bigint PRIMARY KEY NOT NULL,
	"file_id" uuid NOT NULL,
	"plus_id" uuid NOT NULL,
	"model_id" uuid NOT NULL,
	"embedding" real[] NOT NULL
);
--> statement-breakpoint
CREATE TABLE "plus_file_embeddings" (
	"file_id" uuid PRIMARY KEY NOT NULL,
	"team_id" uuid NOT NULL,
	"model_id" uuid NOT NULL,
	"status" text NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"error" text,
	"next_attempt" timestamp with time zone DEFAULT now() NOT NULL,
	"claimed_until" timestamp with time zone,
	"updated" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "team_embedding_models" (
	"team_id" uuid PRIMARY KEY NOT NULL,
	"model_id" uuid NOT NULL,
	"updated" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "models" ADD COLUMN "kind" text DEFAULT 'chat' NOT NULL;--> statement-breakpoint
ALTER TABLE "models" ADD COLUMN "embedding_dimensions" integer;--> statement-breakpoint
ALTER TABLE "plus_chunk_vectors" ADD CONSTRAINT "plus_chunk_vectors_chunk_id_plus_chunks_id_fk" FOREIGN KEY ("chunk_id") REFERENCES "public"."plus_chunks"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "plus_file_embeddings" ADD CONSTRAINT "plus_file_embeddings_file_id_plus_files_id_fk" FOREIGN KEY ("file_id") REFERENCES "public"."plus_files"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "plus_file_embeddings" ADD CONSTRAINT "plus_file_embeddings_team_id_teams_id_fk" FOREIGN KEY ("team_id") REFERENCES "public"."teams"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "team_embedding_models" ADD CONSTRAINT "team_embedding_models_team_id_teams_id_fk" FOREIGN KEY ("team_id") REFERENCES "public"."teams"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "team_embedding_models" ADD CONSTRAINT "team_embedding_models_model_id_models_id_fk" FOREIGN KEY ("model_id") REFERENCES "public"."models"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "plus_chunk_vectors_plus_idx" ON "plus_chunk_vectors" USING btree ("plus_id","model_id");--> statement-breakpoint
CREATE INDEX "plus_chunk_vectors_file_idx" ON "plus_chunk_vectors" USING btree ("file_id");--> statement-breakpoint
CREATE INDEX "plus_file_embeddings_due_idx" ON "plus_file_embeddings" USING btree ("next_attempt") WHERE "plus_file_embeddings"."status" <> 'ready';--> statement-breakpoint
CREATE INDEX "plus_file_embeddings_team_idx" ON "plus_file_embeddings" USING btree ("team_id");