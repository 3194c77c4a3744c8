import type { Executor } from '../../db/client.js';
import { auditLog } from '../../db/schema/audit.js';

/**
 * Every action the audit log records. A name is `<resource>.<verb>`; `export.*` are reads that
 * take data out of Atrium.
 */
export const AUDIT_ACTIONS = [
  'auth.login',
  'auth.login_failed',
  'auth.logout',
  'team.create',
  'team.update',
  'user.create',
  'user.update',
  'user.delete',
  'apikey.create',
  'apikey.revoke',
  'model.create',
  'model.update',
  'model.delete',
  'workspace.create',
  'workspace.update',
  'workspace.delete',
  'plus.create',
  'plus.update',
  'plus.delete',
  'plus.evaluation_update',
  'plus.evaluation_run',
  'budget.create',
  'budget.update',
  'budget.delete',
  'mcp.create',
  'mcp.update',
  'mcp.delete',
  'share.create',
  'share.revoke',
  'thread.update',
  'export.prompt_logs',
  'export.usage',
  'export.audit',
  'export.thread',
  'retention.purge',
  'scim.token_create',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/**
 * Who acted: a signed-in caller (a teams Principal fits as it is: `keyId` is the API key used, or
 * null with a session; `ip` the request's address when the HTTP layer set it), or null for the
 * operator's command line and background jobs.
 */
export interface Actor {
  teamId: string | null;
  /** null: someone not (yet) known, such as a refused sign-in */
  userId: number | null;
  keyId: string | null;
  ip?: string | null | undefined;
}

/**
 * What an entry may say beyond its action and target: flat names and numbers, never a nested
 * object — so no request body, header set or model configuration is ever passed in whole.
 */
export type AuditDetails = Record<string, string | number | boolean | null | string[]>;

export interface AuditEntry {
  action: AuditAction;
  /** null: the operator (command line) or a background job */
  actor: Actor | null;
  /** the team the entry belongs to; defaults to the actor's; null only for an action of no team */
  teamId?: string | null;
  target?: { type: string; id: string | number } | null;
  outcome?: 'success' | 'failure';
  details?: AuditDetails;
}

/**
 * Names a detail may never carry, whatever a caller passes: the last line of defence behind the
 * rule that no secret, password, key or prompt text is written to the log.
 */
const FORBIDDEN_DETAIL = /pass|secret|token|key$|prompt$|prompttext|^(text|content|messages?|response|body|headers?|cookies?|authorization)$/i;

function safeDetails(details: AuditDetails | undefined): AuditDetails {
  const out: AuditDetails = {};
  for (const [k, v] of Object.entries(details ?? {})) {
    if (FORBIDDEN_DETAIL.test(k)) throw new Error(`audit detail "${k}" may hold a secret or prompt text: it is never recorded`);
    out[k] = v;
  }
  return out;
}

/**
 * Record one action. Pass the executor of the transaction that makes the change, so the entry is
 * written exactly when the change is (both or neither). The only writer of `audit_log`.
 */
export async function recordAudit(ex: Executor, entry: AuditEntry): Promise<void> {
  const a = entry.actor;
  await ex.insert(auditLog).values({
    teamId: entry.teamId !== undefined ? entry.teamId : (a?.teamId ?? null),
    actorUserId: a?.userId ?? null,
    actorApiKeyId: a?.keyId ?? null,
    actorIp: a?.ip ?? null,
    action: entry.action,
    targetType: entry.target?.type ?? null,
    targetId: entry.target ? String(entry.target.id) : null,
    outcome: entry.outcome ?? 'success',
    details: safeDetails(entry.details),
  });
}

/** The names of the fields a request sets (never their values: a model's apiKey is one of them). */
export function changedFields(body: object): string[] {
  return Object.entries(body)
    .filter(([, v]) => v !== undefined)
    .map(([k]) => k)
    .sort();
}

/** An export's filters, as its entry's details (dates, names and numbers only). */
export function filterDetails(q: object): Record<string, string | number> {
  const out: Record<string, string | number> = {};
  for (const [k, v] of Object.entries(q)) if (typeof v === 'string' || typeof v === 'number') out[k] = v;
  return out;
}
