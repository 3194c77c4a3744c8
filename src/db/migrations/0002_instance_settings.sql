CREATE TABLE "instance_settings" (
	"name" text PRIMARY KEY NOT NULL,
	"value" text NOT NULL,
	"created" timestamp with time zone DEFAULT now() NOT NULL
);
