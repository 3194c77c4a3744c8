CREATE TABLE "workspace_plus" (
	"workspace_id" uuid NOT NULL,
	"plus_id" uuid NOT NULL,
	"position" integer NOT NULL,
	CONSTRAINT "workspace_plus_workspace_id_plus_id_pk" PRIMARY KEY("workspace_id","plus_id")
);
--> statement-breakpoint
ALTER TABLE "workspace_plus" ADD CONSTRAINT "workspace_plus_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "workspace_plus" ADD CONSTRAINT "workspace_plus_plus_id_plus_entries_id_fk" FOREIGN KEY ("plus_id") REFERENCES "public"."plus_entries"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "workspace_plus_plus_idx" ON "workspace_plus" USING btree ("plus_id");