-- The address as sign-in compares it (security/email.ts). Existing rows are keyed here with
-- PostgreSQL's NFKC and lower(), which equal the JavaScript rule for every address but those few
-- whose case mapping differs between the two (such as U+0130): those accounts match only their
-- key as written here, never a looser one.
ALTER TABLE "users" ADD COLUMN "email_key" text;--> statement-breakpoint
UPDATE "users" SET "email_key" = lower(normalize(btrim("email"), NFKC));--> statement-breakpoint
ALTER TABLE "users" ALTER COLUMN "email_key" SET NOT NULL;--> statement-breakpoint
CREATE INDEX "users_email_key_idx" ON "users" USING btree ("email_key");
