CREATE TABLE "team_rerank_models" (
	"team_id" uuid PRIMARY KEY NOT NULL,
	"model_id" uuid NOT NULL,
	"updated" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "team_rerank_models" ADD CONSTRAINT "team_rerank_models_team_id_teams_id_fk" FOREIGN KEY ("team_id") REFERENCES "public"."teams"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "team_rerank_models" ADD CONSTRAINT "team_rerank_models_model_id_models_id_fk" FOREIGN KEY ("model_id") REFERENCES "public"."models"("id") ON DELETE cascade ON UPDATE no action;