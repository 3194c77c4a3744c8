-- The audit log is append-only: no statement may change or remove an entry (see docs/DECISIONS.md).
CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'audit_log is append-only: % refused', TG_OP USING ERRCODE = 'insufficient_privilege';
END;
$$;--> statement-breakpoint
CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON audit_log FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();--> statement-breakpoint
CREATE INDEX "chat_threads_team_updated_idx" ON "chat_threads" USING btree ("team_id", "updated") WHERE NOT "pinned";
