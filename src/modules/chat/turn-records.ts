import type { SearchRewrite, StoredSource, StoredToolCall } from '../../db/schema.js';
import { statusOf, upstreamError } from '../../errors.js';
import { countTokens } from '../../ingest/tokens.js';
import { describeForLog } from '../../providers/index.js';
import type { ChatMessage, ToolCall, Usage } from '../../providers/types.js';
import type { Principal } from '../../policy/index.js';
import type { LedgerEntry } from '../usage/repo.js';
import type { UsageService } from '../usage/service.js';
import type { CalibratedUsage } from './context-fit.js';
import type { Rewritten } from './follow-up.js';
import { ZERO_USAGE, type Outcome } from './provider-call.js';
import { THREAD_DELETED, type AnswerRecord } from './repo.js';
import type { Plan } from './turn-plan.js';
import type { TurnEvent } from './turns.js';

/**
 * Step 7 of a turn (turns.ts): what is written of how the provider call ended (the answer and the
 * prompt log of statement 2, the ledger row) and the event that closes the turn.
 */

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
  ids: { messageId: string; logId: string; parentId: string | null },
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
      ? {
          id: ids.messageId,
          parentId: ids.parentId,
          content: o.content,
          modelId: plan.model.id,
          usage: nothingAnswered ? null : stored,
          sources,
          status,
          error,
          toolCalls: o.tools?.calls.length ? o.tools.calls : null,
        }
      : null,
    logId: ids.logId,
    log: {
      response: responseText(o) || null,
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
  pricing: Pick<UsageService, 'creditsOf'>,
  caller: Principal,
  plan: Plan,
  logId: string,
  o: Outcome,
  usage: Usage,
  created: Date,
  rewriteUsed: Rewritten['used'] | null,
  reserved: number | null,
): LedgerEntry {
  const last = o.kind === 'failed' && o.content.length === 0 ? ZERO_USAGE : usage;
  // The tool steps before a call that did not answer were answered, and are billed (an answer's usage has them already).
  const prior = o.kind !== 'answered' ? o.tools?.priorUsage : undefined;
  const call = prior ? { promptTokens: last.promptTokens + prior.promptTokens, completionTokens: last.completionTokens + prior.completionTokens } : last;
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
    credits: pricing.creditsOf(plan.model.price, billed.promptTokens, billed.completionTokens, reserved),
    status: o.kind === 'answered' ? 'ok' : o.kind === 'interrupted' ? 'interrupted' : 'error',
    created,
  };
}

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

/** A tool call as the prompt log shows it: `[tool call <id>] name(arguments)`. */
export function toolCallText(c: ToolCall): string {
  return `[tool call ${c.id}] ${c.name}(${c.arguments})`;
}

/** The prompt log's prompt: the request's last turn; a tool result as `[tool result <id>] content`. */
export function promptText(m: ChatMessage): string {
  return m.role === 'tool' ? `[tool result ${m.toolCallId ?? ''}] ${m.content}` : m.content;
}

/** A workspace tool's call and result as the prompt log shows them: the call's line, then `[tool result <id>]` (or `[tool error <id>]`) and the text. */
export function toolRunText(c: StoredToolCall): string {
  return `${toolCallText(c)}\n[tool ${c.ok ? 'result' : 'error'} ${c.id}] ${c.content}`;
}

/** The prompt log's response: the workspace tools' calls and results, the answer's text, then one line per tool call it asks the client for. */
export function responseText(o: Outcome): string {
  const calls = o.kind === 'answered' ? o.toolCalls : [];
  return [...(o.tools?.calls ?? []).map(toolRunText), o.content, ...calls.map(toolCallText)].filter((t) => t.length > 0).join('\n');
}
