-- A team's budgets revision, read with every API key: a node reuses the budget rules it read at that revision
-- instead of reading them on every call (modules/usage, UsageService.teamRules).
ALTER TABLE "teams" ADD COLUMN "budgets_revision" integer DEFAULT 0 NOT NULL;
