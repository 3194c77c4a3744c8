/**
 * What a turn stores when its provider call has ended, and the event that ends it: the answer and
 * the finished log (statement 2), the ledger row, usage estimated where the provider gave none.
 */
import type { SearchRewrite, StoredSource } from '../../db/schema/chat.js';
import { statusOf, upstreamError } from '../../errors.js';
import { countTokens } from '../../ingest/tokens.js';
import { describeForLog } from '../../providers/index.js';
import type { Usage } from '../../providers/types.js';
import type { Principal } from '../teams/service.js';
import type { LedgerEntry } from '../usage/repo.js';
import type { UsageService } from '../usage/service.js';
import type { CalibratedUsage } from './context-fit.js';
import type { Rewritten } from './follow-up.js';
import { ZERO_USAGE, type Outcome } from './provider-call.js';
import { THREAD_DELETED, type AnswerRecord } from './repo.js';
import type { Plan } from './turn-plan.js';
import type { TurnEvent } from './turns.js';

/** The provider reported no usage: estimate with the same tokenizer used for budgets. */
export function estimateIfMissing(reported: Usage, estimatedPromptTokens: number, content: string): Usage {
  if (reported.totalTokens > 0 || reported.promptTokens > 0 || reported.completionTokens > 0) return reported;
  const completionTokens = countTokens(content);
  return { promptTokens: estimatedPromptTokens, completionTokens, totalTokens: estimatedPromptTokens + completionTokens };
}

/**
 * What is stored for each outcome: an answer (ok); what arrived before the client left or the
 * provider broke (interrupted, if anything arrived); a provider failure before any text as an
 * assistant message of status `error` with its problem, so a reload shows what failed. The log
 * says ok, interrupted or error + why.
 */
export function answerRecord(
  plan: Plan,
  ids: { messageId: string; logId: string },
  sources: StoredSource[],
  o: Outcome,
  usage: Usage,
  estimatedPromptTokens: number,
  now: Date,
  latencyMs: number,
  rewrite: SearchRewrite | null,
): Omit<AnswerRecord, 'ledger' | 'settle'> {
  const nothingAnswered = o.kind === 'failed' && o.content.length === 0;
  const status = o.kind === 'answered' ? 'ok' : nothingAnswered ? 'error' : 'interrupted';
  const keepMessage = plan.store && (o.kind !== 'interrupted' || o.content.length > 0);
  // The local estimate beside the provider's own prompt count calibrates the thread's next fit (never shown in the API).
  const stored: CalibratedUsage = o.kind === 'answered' && o.usage.promptTokens > 0 ? { ...usage, localPromptTokens: estimatedPromptTokens } : usage;
  const problem = o.kind === 'failed' ? upstreamError(o.error) : null;
  const error = problem ? { status: statusOf(problem.kind), code: problem.code, detail: problem.message } : null;
  return {
    threadId: plan.threadId,
    message: keepMessage
      ? { id: ids.messageId, content: o.content, modelId: plan.model.id, usage: nothingAnswered ? null : stored, sources, status, error }
      : null,
    logId: ids.logId,
    log: {
      response: o.content || null,
      promptTokens: usage.promptTokens,
      completionTokens: usage.completionTokens,
      latencyMs,
      status: o.kind === 'answered' ? 'ok' : o.kind === 'interrupted' ? 'interrupted' : 'error',
      error: o.kind === 'answered' ? null : o.kind === 'interrupted' ? 'client disconnected' : describeForLog(o.error),
      rewrite,
    },
    now,
  };
}

/**
 * The ledger row of an attempt: the provider's usage when it answered; an interrupted call
 * (or a failure after text arrived) what was sent and received, counted by Atrium; a failure
 * before any text, nothing (providers do not bill refused calls). A budgeted turn is charged at
 * most the credits it reserved (`reserved`; null without a budget).
 */
export function ledgerEntry(
  usageService: Pick<UsageService, 'creditsOf'>,
  caller: Principal,
  plan: Plan,
  logId: string,
  o: Outcome,
  usage: Usage,
  created: Date,
  rewriteUsed: Rewritten['used'] | null,
  reserved: number | null,
): LedgerEntry {
  const call = o.kind === 'failed' && o.content.length === 0 ? ZERO_USAGE : usage;
  // The follow-up's rewrite was a call of its own, billed whatever became of the answer.
  const billed = rewriteUsed
    ? { promptTokens: call.promptTokens + rewriteUsed.promptTokens, completionTokens: call.completionTokens + rewriteUsed.completionTokens }
    : call;
  return {
    id: logId,
    teamId: caller.teamId,
    userId: caller.userId,
    apiKeyId: caller.keyId || null,
    workspaceId: plan.workspace.id,
    modelId: plan.model.id,
    modelName: plan.model.name,
    promptTokens: billed.promptTokens,
    completionTokens: billed.completionTokens,
    credits: usageService.creditsOf(plan.model.price, billed.promptTokens, billed.completionTokens, reserved),
    status: o.kind === 'answered' ? 'ok' : o.kind === 'interrupted' ? 'interrupted' : 'error',
    created,
  };
}

/** The event that ends the turn: `done`, or `error` with the classified problem (or the thread deleted meanwhile). */
export function endEvent(o: Outcome, usage: Usage, created: Date, kept: boolean): TurnEvent {
  if (o.kind !== 'answered') {
    const e = upstreamError(o.error);
    return {
      type: 'error',
      kind: e.kind,
      code: e.code,
      detail: e.message,
      ...(e.retryAfterSeconds !== undefined ? { retryAfterSeconds: e.retryAfterSeconds } : {}),
      ...(e.final ? { final: true } : {}),
    };
  }
  if (!kept) return { type: 'error', kind: 'conflict', code: 'thread_deleted', detail: THREAD_DELETED.replace(/^thread_deleted: t/, 'T') };
  return { type: 'done', finishReason: o.finishReason, usage, created: created.toISOString() };
}
