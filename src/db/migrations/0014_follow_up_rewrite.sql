ALTER TABLE "prompt_logs" ADD COLUMN "rewrite" jsonb;--> statement-breakpoint
ALTER TABLE "workspaces" ADD COLUMN "follow_up_search" text DEFAULT 'carry' NOT NULL;