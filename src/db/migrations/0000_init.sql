CREATE TABLE "api_keys" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"user_id" integer NOT NULL,
	"name" text NOT NULL,
	"key_hash" text NOT NULL,
	"prefix" text NOT NULL,
	"created" timestamp with time zone DEFAULT now() NOT NULL,
	"last_used" timestamp with time zone,
	"revoked" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "chat_messages" (
	"id" uuid PRIMARY KEY NOT NULL,
	"seq" bigint GENERATED ALWAYS AS IDENTITY (sequence name "chat_messages_seq_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"thread_id" uuid NOT NULL,
	"role" text NOT NULL,
	"content" text NOT NULL,
	"model_id" uuid,
	"usage" jsonb,
	"sources" jsonb,
	"status" text DEFAULT 'ok' NOT NULL,
	"created" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "chat_threads" (
	"id" uuid PRIMARY KEY NOT NULL,
	"team_id" uuid NOT NULL,
	"workspace_id" uuid NOT NULL,
	"user_id" integer NOT NULL,
	"title" text NOT NULL,
	"created" timestamp with time zone DEFAULT now() NOT NULL,
	"updated" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "models" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"team_id" uuid,
	"is_system" boolean DEFAULT false NOT NULL,
	"name" text NOT NULL,
	"api_key_enc" text,
	"api_key_last4" text,
	"url" text,
	"connection_type" text DEFAULT 'URL' NOT NULL,
	"api_base" text DEFAULT 'OPENAI' NOT NULL,
	"icon" text,
	"base_model" text,
	"param_count" bigint,
	"compute_type" text,
	"architecture" text,
	"format" text,
	"engine" text,
	"bit_count" integer,
	"group_size" integer,
	"context_window" integer,
	"prompt_mode" text,
	"accuracy" double precision,
	"speed" double precision,
	"weight" double precision,
	"specialized" boolean DEFAULT false NOT NULL,
	"active" boolean DEFAULT true NOT NULL,
	"chat_credits" integer DEFAULT 1 NOT NULL,
	"internal_use_only" boolean DEFAULT false NOT NULL,
	"uses_system_prompts" boolean DEFAULT true NOT NULL,
	"image_gen" boolean DEFAULT false NOT NULL,
	"has_vision" boolean DEFAULT false NOT NULL,
	"instruction_following" boolean DEFAULT true NOT NULL,
	"settings_available" jsonb,
	"prompt_wrapper" jsonb,
	"model_rating" integer,
	"created" timestamp with time zone DEFAULT now() NOT NULL,
	"updated" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "plus_chunks" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "plus_chunks_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"file_id" uuid NOT NULL,
	"plus_id" uuid NOT NULL,
	"idx" integer NOT NULL,
	"file_data" text NOT NULL,
	"file_data_processed" text NOT NULL,
	"token_size" integer NOT NULL,
	"search" "tsvector" GENERATED ALWAYS AS (to_tsvector('english', file_data_processed)) STORED
);
--> statement-breakpoint
CREATE TABLE "plus_entries" (
	"id" uuid PRIMARY KEY NOT NULL,
	"team_id" uuid NOT NULL,
	"user_id" integer NOT NULL,
	"title" text,
	"description" text,
	"context" text,
	"is_public" boolean DEFAULT false NOT NULL,
	"created" timestamp with time zone DEFAULT now() NOT NULL,
	"updated" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "plus_files" (
	"id" uuid PRIMARY KEY NOT NULL,
	"plus_id" uuid NOT NULL,
	"user_id" integer NOT NULL,
	"thread_id" uuid,
	"filename" text NOT NULL,
	"mime_type" text NOT NULL,
	"bytes" bigint NOT NULL,
	"content" "bytea" NOT NULL,
	"text" text NOT NULL,
	"token_size" integer NOT NULL,
	"summary" text,
	"created" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "prompt_logs" (
	"id" uuid PRIMARY KEY NOT NULL,
	"team_id" uuid NOT NULL,
	"user_id" integer NOT NULL,
	"workspace_id" uuid,
	"thread_id" uuid,
	"model_id" uuid,
	"model_name" text,
	"prompt" text NOT NULL,
	"response" text,
	"prompt_tokens" integer,
	"completion_tokens" integer,
	"latency_ms" integer,
	"status" text NOT NULL,
	"error" text,
	"created" timestamp with time zone DEFAULT now() NOT NULL,
	"search" "tsvector" GENERATED ALWAYS AS (to_tsvector('simple', coalesce(prompt, '') || ' ' || coalesce(response, ''))) STORED
);
--> statement-breakpoint
CREATE TABLE "team_models" (
	"team_id" uuid NOT NULL,
	"model_id" uuid NOT NULL,
	"added" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "team_models_team_id_model_id_pk" PRIMARY KEY("team_id","model_id")
);
--> statement-breakpoint
CREATE TABLE "teams" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"name" text NOT NULL,
	"created" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "users" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "users_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"team_id" uuid NOT NULL,
	"name" text NOT NULL,
	"email" text NOT NULL,
	"role" text NOT NULL,
	"instance_admin" boolean DEFAULT false NOT NULL,
	"created" timestamp with time zone DEFAULT now() NOT NULL,
	"deleted" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "workspace_models" (
	"workspace_id" uuid NOT NULL,
	"model_id" uuid NOT NULL,
	"position" integer NOT NULL,
	"added_context" text,
	"system_instructions" text,
	"temperature" double precision,
	"max_tokens" integer,
	"top_p" double precision,
	"n" integer,
	"frequency_penalty" double precision,
	"presence_penalty" double precision,
	"logit_bias" jsonb,
	CONSTRAINT "workspace_models_workspace_id_model_id_pk" PRIMARY KEY("workspace_id","model_id")
);
--> statement-breakpoint
CREATE TABLE "workspaces" (
	"id" uuid PRIMARY KEY NOT NULL,
	"team_id" uuid NOT NULL,
	"user_id" integer NOT NULL,
	"name" text NOT NULL,
	"chat_history_type" text NOT NULL,
	"context_type" text NOT NULL,
	"sharing_type" text NOT NULL,
	"greeting" text,
	"sample_prompts" jsonb,
	"created" timestamp with time zone DEFAULT now() NOT NULL,
	"updated" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "chat_messages" ADD CONSTRAINT "chat_messages_thread_id_chat_threads_id_fk" FOREIGN KEY ("thread_id") REFERENCES "public"."chat_threads"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "chat_threads" ADD CONSTRAINT "chat_threads_team_id_teams_id_fk" FOREIGN KEY ("team_id") REFERENCES "public"."teams"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "chat_threads" ADD CONSTRAINT "chat_threads_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "chat_threads" ADD CONSTRAINT "chat_threads_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "models" ADD CONSTRAINT "models_team_id_teams_id_fk" FOREIGN KEY ("team_id") REFERENCES "public"."teams"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "plus_chunks" ADD CONSTRAINT "plus_chunks_file_id_plus_files_id_fk" FOREIGN KEY ("file_id") REFERENCES "public"."plus_files"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "plus_entries" ADD CONSTRAINT "plus_entries_team_id_teams_id_fk" FOREIGN KEY ("team_id") REFERENCES "public"."teams"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "plus_entries" ADD CONSTRAINT "plus_entries_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "plus_files" ADD CONSTRAINT "plus_files_plus_id_plus_entries_id_fk" FOREIGN KEY ("plus_id") REFERENCES "public"."plus_entries"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "prompt_logs" ADD CONSTRAINT "prompt_logs_team_id_teams_id_fk" FOREIGN KEY ("team_id") REFERENCES "public"."teams"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "team_models" ADD CONSTRAINT "team_models_team_id_teams_id_fk" FOREIGN KEY ("team_id") REFERENCES "public"."teams"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "team_models" ADD CONSTRAINT "team_models_model_id_models_id_fk" FOREIGN KEY ("model_id") REFERENCES "public"."models"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "users" ADD CONSTRAINT "users_team_id_teams_id_fk" FOREIGN KEY ("team_id") REFERENCES "public"."teams"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "workspace_models" ADD CONSTRAINT "workspace_models_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "workspace_models" ADD CONSTRAINT "workspace_models_model_id_models_id_fk" FOREIGN KEY ("model_id") REFERENCES "public"."models"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "workspaces" ADD CONSTRAINT "workspaces_team_id_teams_id_fk" FOREIGN KEY ("team_id") REFERENCES "public"."teams"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "workspaces" ADD CONSTRAINT "workspaces_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "api_keys_hash_uq" ON "api_keys" USING btree ("key_hash");--> statement-breakpoint
CREATE INDEX "api_keys_user_idx" ON "api_keys" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "chat_messages_thread_idx" ON "chat_messages" USING btree ("thread_id","seq");--> statement-breakpoint
CREATE INDEX "chat_threads_ws_idx" ON "chat_threads" USING btree ("workspace_id","updated");--> statement-breakpoint
CREATE INDEX "models_team_idx" ON "models" USING btree ("team_id");--> statement-breakpoint
CREATE INDEX "plus_chunks_file_idx" ON "plus_chunks" USING btree ("file_id","idx");--> statement-breakpoint
CREATE INDEX "plus_chunks_plus_idx" ON "plus_chunks" USING btree ("plus_id");--> statement-breakpoint
CREATE INDEX "plus_chunks_search_idx" ON "plus_chunks" USING gin ("search");--> statement-breakpoint
CREATE INDEX "plus_entries_team_idx" ON "plus_entries" USING btree ("team_id");--> statement-breakpoint
CREATE INDEX "plus_files_plus_idx" ON "plus_files" USING btree ("plus_id");--> statement-breakpoint
CREATE INDEX "plus_files_thread_idx" ON "plus_files" USING btree ("thread_id");--> statement-breakpoint
CREATE INDEX "prompt_logs_team_created_idx" ON "prompt_logs" USING btree ("team_id","created");--> statement-breakpoint
CREATE INDEX "prompt_logs_search_idx" ON "prompt_logs" USING gin ("search");--> statement-breakpoint
CREATE UNIQUE INDEX "users_team_email_uq" ON "users" USING btree ("team_id",lower("email"));--> statement-breakpoint
CREATE INDEX "workspaces_team_idx" ON "workspaces" USING btree ("team_id");