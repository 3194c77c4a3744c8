CREATE TABLE "plus_eval_questions" (
	"id" uuid PRIMARY KEY NOT NULL,
	"team_id" uuid NOT NULL,
	"plus_id" uuid NOT NULL,
	"position" integer NOT NULL,
	"question" text NOT NULL,
	"passage" text NOT NULL,
	"created" timestamp with time zone DEFAULT now() NOT NULL,
	"updated" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "plus_eval_runs" (
	"team_id" uuid NOT NULL,
	"plus_id" uuid NOT NULL,
	"user_id" integer NOT NULL,
	"ran" timestamp with time zone NOT NULL,
	"method" text NOT NULL,
	"recall_at5" double precision NOT NULL,
	"mrr_at10" double precision NOT NULL,
	"ndcg_at10" double precision NOT NULL,
	"results" jsonb NOT NULL,
	CONSTRAINT "plus_eval_runs_team_id_plus_id_pk" PRIMARY KEY("team_id","plus_id")
);
--> statement-breakpoint
ALTER TABLE "plus_eval_questions" ADD CONSTRAINT "plus_eval_questions_team_id_plus_id_plus_entries_team_id_id_fk" FOREIGN KEY ("team_id","plus_id") REFERENCES "public"."plus_entries"("team_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "plus_eval_runs" ADD CONSTRAINT "plus_eval_runs_team_id_plus_id_plus_entries_team_id_id_fk" FOREIGN KEY ("team_id","plus_id") REFERENCES "public"."plus_entries"("team_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "plus_eval_questions_plus_idx" ON "plus_eval_questions" USING btree ("team_id","plus_id","position");