import { randomUUID } from 'node:crypto';
import { TtlCache } from '../../cache.js';
import type { Db } from '../../db/client.js';
import { GroupCommit } from '../../db/group-commit.js';
import type { SearchRewrite, StoredSource } from '../../db/schema.js';
import { AppError, badRequest, notFound, statusOf, upstreamError, type ErrorKind } from '../../errors.js';
import { countTokens, firstTokens } from '../../ingest/tokens.js';
import { classifyProviderError, describeForLog, getAdapter, type ProviderError } from '../../providers/index.js';
import { observe } from '../../observability/hooks.js';
import type { ChatMessage, GenerationParams, ProviderTarget, ProviderTimeouts, ToolCall, ToolCallDelta, ToolOptions, Usage } from '../../providers/types.js';
import { assertMaxTokensFit, contextWindowOf, DEFAULT_CONTEXT_WINDOW, type ModelsService } from '../models/service.js';
import type { PlusService } from '../plus/service.js';
import type { PromptLogsService } from '../prompt-logs/service.js';
import type { Principal } from '../teams/service.js';
import type { BudgetHold } from '../usage/counters.js';
import type { LedgerEntry } from '../usage/repo.js';
import type { TurnCost, UsageService } from '../usage/service.js';
import type { WorkspaceRow } from '../workspaces/repo.js';
import type { WorkspacesService } from '../workspaces/service.js';
import { calibrationFrom, completeWithContextRetry, effectiveMaxTokens, streamWithContextRetry, type CalibratedUsage } from './context-fit.js';
import { assemblePrompt, refitAfterContextError, titleFrom, tokensOf, type AssembledPrompt, type AssemblyInput } from './prompt.js';
import { REWRITE_ALLOWANCE_TOKENS, rewriteFollowUp, type Rewritten } from './follow-up.js';
import { ChatRepo, THREAD_DELETED, type AnswerRecord, type StoredAnswer, type StoredUserTurn, type UserTurnRecord } from './repo.js';
import type { ChatAnswerT, ChatCompletionRequestT } from './schema.js';

/**
 * A chat turn, start to end, in the order it happens (docs/ARCHITECTURE.md "A chat turn").
 * `TurnService.run` is the one pipeline; the plain route (`complete`), the stream route and an
 * OpenAI-compatible route only differ in how they consume its events. The provider target (with
 * the decrypted key) lives inside `run` and never leaves this file.
 */
export type TurnEvent =
  | { type: 'start'; threadId: string; messageId: string; modelId: string }
  | { type: 'sources'; sources: StoredSource[] }
  | { type: 'delta'; content: string }
  /** a piece of a tool call (streamed: as the provider sends them; plain: one per call, whole) */
  | { type: 'tool_call'; call: ToolCallDelta }
  | { type: 'done'; finishReason: string; usage: Usage; created: string }
  | { type: 'error'; kind: ErrorKind; code: string; detail: string; retryAfterSeconds?: number; final?: boolean };

/** A turn's error event as the AppError it stands for (the plain answer, or a stream not yet open, throws it). */
export function errorOfEvent(ev: Extract<TurnEvent, { type: 'error' }>): AppError {
  const e = new AppError(ev.kind, ev.code, ev.detail);
  if (ev.retryAfterSeconds !== undefined) e.retryAfterSeconds = ev.retryAfterSeconds;
  if (ev.final) e.final = true;
  return e;
}

/**
 * What a turn is asked: /api/v1/chat's request, or the OpenAI-compatible API's, whose messages may
 * carry tool calls and results and which may offer tools. Tools are only for ephemeral turns
 * (`store: false`): a thread keeps no tool exchange.
 */
export type TurnRequest = Omit<ChatCompletionRequestT, 'messages'> & { messages?: ChatMessage[]; tools?: ToolOptions };

export interface TurnOptions {
  /** stream deltas as the provider sends them (else one delta with the whole answer) */
  stream: boolean;
  /** aborts the provider call (the client went away); what arrived is kept as interrupted */
  signal?: AbortSignal;
  /**
   * false: an ephemeral turn (the OpenAI-compatible API's default). Everything runs as usual on a
   * thread that is never stored: no thread, no messages, only the prompt log (with no threadId).
   * Default true. Cannot be combined with `req.threadId`.
   */
  store?: boolean;
}

/** Context from Plus entries (implemented by PlusService). */
export type ContextSource = Pick<PlusService, 'contextForTurn' | 'visibleIds'>;

const ZERO_USAGE: Usage = Object.freeze({ promptTokens: 0, completionTokens: 0, totalTokens: 0 });
const NO_CONTEXT = Object.freeze({ text: '', sources: [] as StoredSource[] });
/** Retrieved context may use at most this share of the model's window. */
const CONTEXT_SHARE = 0.4;
/** How long a thread's last-exchange size is kept (it is only ever replaced by this node's own answers). */
const EXCHANGE_TTL_MS = 10 * 60_000;

/** Everything checked and resolved before anything is stored. */
interface Plan {
  workspace: WorkspaceRow;
  historyScope: { workspaceId: string; onlyUserId?: number } | null;
  threadId: string;
  /** false: the thread is ephemeral (TurnOptions.store) */
  store: boolean;
  newTurns: ChatMessage[];
  plusIds: string[];
  /** the workspace's own Plus entries (beyond plusIds): drawn on when visible to the caller, skipped otherwise */
  workspacePlusIds: string[];
  model: { id: string; name: string; price: number; contextWindow: number | null; usesSystemPrompts: boolean; promptWrapper: { value: string } | null };
  settings: { systemInstructions: string | null; addedContext: string | null };
  target: ProviderTarget;
  params: GenerationParams;
  /** the tools offered (TurnRequest.tools), null: none */
  tools: ToolOptions | null;
}

/** What the prompt was fitted from, to refit it once after a context-length refusal. */
interface Fit {
  input: AssemblyInput;
  assembled: AssembledPrompt;
}

/** How the provider call ended: the only place it is classified. */
type Outcome =
  | { kind: 'answered'; content: string; toolCalls: ToolCall[]; finishReason: string; usage: Usage }
  | { kind: 'interrupted'; content: string; error: ProviderError }
  | { kind: 'failed'; content: string; error: ProviderError };

export class TurnService {
  private readonly repo = new ChatRepo();
  private readonly userTurns = new GroupCommit<UserTurnRecord, StoredUserTurn>((items) => this.repo.recordUserTurns(this.db, items));
  private readonly answers = new GroupCommit<AnswerRecord, StoredAnswer>((items) => this.repo.recordAnswers(this.db, items));
  /** Per thread, the tokens of its last exchange (lastExchangeTokens); a thread's value changes only with its answers, stored here. */
  private readonly exchanges = new TtlCache<string, number>(EXCHANGE_TTL_MS);

  constructor(
    private readonly db: Db,
    private readonly workspaces: WorkspacesService,
    private readonly models: ModelsService,
    private readonly context: ContextSource,
    private readonly logs: PromptLogsService,
    private readonly timeouts: ProviderTimeouts,
    private readonly usage: UsageService,
    /** a follow-up's rewrite failed (the turn carried terms instead): reported, not thrown */
    private readonly onRewriteFailure: (why: string) => void = () => {},
  ) {}

  /**
   * One turn as events: `start`, `sources` (when context was used), `delta`…, then `done` or
   * `error`. Getting the first event validates the request and stores the user's turn; its
   * failures are thrown as AppErrors (4xx) before any event exists, so a stream opens only
   * after them. Every later failure becomes an `error` event, and the turn's prompt log always
   * ends final (ok, error or interrupted).
   */
  async *run(caller: Principal, workspaceId: string, req: TurnRequest, opts: TurnOptions): AsyncGenerator<TurnEvent> {
    // 1. Check and resolve everything; nothing is stored yet.
    const plan = await this.plan(caller, workspaceId, req, opts.store !== false);
    // 2. Context from the entries the request names: an invisible one is a 404, still before storing.
    //    A follow-up is searched with the thread's previous question's key terms carried (docs/API.md, Follow-ups).
    //    A workspace that has follow-ups rewritten by the model searches after statement 1 (step 4):
    //    the rewrite reads the thread's history and is paid under the turn's reservation.
    const named = plan.plusIds.length + plan.workspacePlusIds.length > 0;
    const rewrites = plan.workspace.followUpSearch === 'rewrite' && (plan.historyScope !== null || previousFrom(plan, []) !== null);
    if (named && rewrites) await this.assertVisible(caller, plan);
    let context = named && !rewrites ? await this.retrieve(caller, plan, await this.previousQuestion(plan)) : NO_CONTEXT;
    // 2b. Reserve what the call may cost against the caller's budgets (null: none applies). Where
    //     the counters live decides whether statement 1 takes the reservation or it is taken here.
    //     A turn that may rewrite reserves for the rewrite and for context it has not retrieved yet.
    const extra = rewrites ? REWRITE_ALLOWANCE_TOKENS + contextBudget(plan) : 0;
    const hold = await this.usage.hold(
      caller,
      plan.model.price,
      () => costOf(plan, context.text, extra),
      plan.historyScope ? () => this.lastExchangeTokens(plan.threadId) : null,
    );
    // 3. Store the user's turn and pending log; the same statement checks the thread and reads its
    //    history (and, with budgets on the database, reserves): a refusal (429) stores nothing.
    const ids = { messageId: randomUUID(), logId: randomUUID() };
    const started = Date.now();
    const stored = await this.storeUserTurn(caller, plan, ids.logId, hold);
    hold?.stored(stored.reservedCredits);
    let finished = false;
    try {
      // 4. A thread with files searches them (known only from the write above); a follow-up in a
      //    workspace that rewrites them is searched as the model rewrote it (carrying terms if that failed).
      let rewrite: Rewritten | null = null;
      if (rewrites && (named || stored.threadHasFiles)) {
        rewrite = await this.rewrite(plan, stored.history, opts.signal);
        const query = rewrite?.rewrite?.query;
        context = await this.retrieve(caller, plan, query ? null : previousFrom(plan, stored.history), query);
      } else if (!named && stored.threadHasFiles) context = await this.retrieve(caller, plan, previousFrom(plan, stored.history));
      // 5. The prompt: system text, history fitted to the window (in the provider's own token count,
      //    calibrated on the thread's previous answer by this model), the new turn(s).
      const input: AssemblyInput = {
        systemInstructions: plan.settings.systemInstructions,
        addedContext: plan.settings.addedContext,
        retrievedContext: context.text || null,
        historyNewestFirst: stored.history.map((m) => ({ role: m.role, content: m.content })),
        newTurns: plan.newTurns,
        contextWindow: plan.model.contextWindow,
        maxTokens: plan.params.maxTokens ?? null,
        usesSystemPrompts: plan.model.usesSystemPrompts,
        promptWrapper: plan.model.promptWrapper,
        calibration: calibrationFrom(stored.history, plan.model.id, this.usage.promptRatioOf(plan.model.id)),
        toolTokens: toolDefinitionTokens(plan.tools),
      };
      const fit: Fit = { input, assembled: assemblePrompt(input) };
      yield { type: 'start', threadId: plan.threadId, messageId: ids.messageId, modelId: plan.model.id };
      if (context.sources.length > 0) yield { type: 'sources', sources: context.sources };
      // 6. The provider call.
      //    A budgeted turn's answer is cut at the output tokens it reserved, whatever the provider does with its cap.
      const outcome = yield* this.callProvider(plan, fit, opts, hold ? (plan.params.maxTokens ?? null) : null);
      if (outcome.kind === 'answered') this.usage.notePromptCount(plan.model.id, outcome.usage.promptTokens, fit.assembled.estimatedPromptTokens);
      // 7. Store the answer and finish the log (statement 2), then say how the turn ended.
      const estimated = fit.assembled.estimatedPromptTokens;
      const usage = estimateIfMissing(outcome.kind === 'answered' ? outcome.usage : ZERO_USAGE, estimated, responseText(outcome));
      const created = new Date();
      const record = answerRecord(plan, ids, context.sources, outcome, usage, estimated, created, Date.now() - started, rewrite?.rewrite ?? null);
      const ledger = this.ledgerEntry(caller, plan, ids.logId, outcome, usage, created, rewrite?.used ?? null, hold?.reservedCredits() ?? null);
      const kept = await this.storeAnswer({ ...record, ledger, settle: hold?.settlementInStatement() ?? null });
      finished = true;
      hold?.settled(ledger.credits);
      observe.chatTurn(ledger);
      if (kept && record.message) this.exchanges.set(plan.threadId, usage.promptTokens + usage.completionTokens);
      yield endEvent(outcome, usage, created, kept);
    } finally {
      // A bug or a lost database between the two writes (or a consumer that stopped listening).
      if (!finished) {
        await this.logs.fail(ids.logId, Date.now() - started, 'internal: the turn stopped before its answer was stored').catch(() => undefined);
        await hold?.release().catch(() => undefined);
      }
    }
  }

  /** The plain (non-streamed) answer: the same pipeline, its events gathered. */
  async complete(
    caller: Principal,
    workspaceId: string,
    req: TurnRequest,
    signal?: AbortSignal,
    opts: { store?: boolean } = {},
  ): Promise<ChatAnswerT & { toolCalls?: ToolCall[] }> {
    let start: Extract<TurnEvent, { type: 'start' }> | undefined;
    let sources: StoredSource[] = [];
    let content = '';
    const toolCalls: ToolCall[] = [];
    for await (const ev of this.run(caller, workspaceId, req, { stream: false, ...(signal ? { signal } : {}), ...opts })) {
      switch (ev.type) {
        case 'start':
          start = ev;
          break;
        case 'sources':
          sources = ev.sources;
          break;
        case 'delta':
          content += ev.content;
          break;
        case 'tool_call':
          toolCalls.push({ id: ev.call.id ?? '', name: ev.call.name ?? '', arguments: ev.call.arguments });
          break;
        case 'error':
          throw errorOfEvent(ev);
        case 'done':
          return {
            ...(toolCalls.length > 0 ? { toolCalls } : {}),
            threadId: start!.threadId,
            messageId: start!.messageId,
            modelId: start!.modelId,
            message: { role: 'assistant', content },
            finishReason: ev.finishReason,
            usage: ev.usage,
            sources,
            created: ev.created,
          };
      }
    }
    throw new Error('turn ended without done or error');
  }

  // ---- the steps -------------------------------------------------------------------------

  private async plan(caller: Principal, workspaceId: string, req: TurnRequest, store: boolean): Promise<Plan> {
    if (!store && req.threadId)
      throw badRequest('validation_failed', 'A turn that continues a thread is stored', [
        { path: 'body/threadId', message: 'cannot be combined with store: false' },
      ]);
    const w = await this.workspaces.load(caller, workspaceId);
    const newTurns: ChatMessage[] = req.messages ?? (req.prompt !== undefined ? [{ role: 'user', content: req.prompt }] : []);
    if (newTurns.length === 0) {
      throw badRequest('validation_failed', 'Send messages or prompt', [{ path: 'body/messages', message: 'one of messages or prompt is required' }]);
    }
    const tools = req.tools && req.tools.definitions.length > 0 ? req.tools : null;
    const toolIndex = newTurns.findIndex((m) => m.role === 'tool' || (m.toolCalls?.length ?? 0) > 0);
    if (store && (tools || toolIndex >= 0)) {
      throw badRequest('tools_unsupported', 'Tools are only offered on turns that are not stored: a thread keeps no tool calls', [
        { path: tools ? 'body/tools' : `body/messages/${toolIndex}`, message: 'cannot be combined with a stored thread' },
      ]);
    }
    const last = newTurns.at(-1)!;
    // A tool result ends a request that continues after the model's tool calls.
    if (last.role !== 'tool' && (last.role !== 'user' || !last.content.trim())) {
      throw badRequest('validation_failed', 'The last message must be a non-empty user message', [
        { path: `body/messages/${newTurns.length - 1}`, message: 'must be a non-empty user message' },
      ]);
    }
    const wm = req.modelId ? w.models.find((m) => m.modelId === req.modelId) : w.models[0];
    if (!wm) {
      throw req.modelId
        ? badRequest('model_not_in_workspace', 'That model is not one of the workspace\u2019s models', [
            { path: 'body/modelId', message: 'is not in this workspace' },
          ])
        : badRequest('workspace_has_no_model', 'The workspace has no model: add one first');
    }
    const model = await this.models.findUsable(caller.teamId, wm.modelId);
    if (!model) throw badRequest('model_not_available', `Model ${wm.modelName} is no longer available to this team`);
    this.models.assertKind(model, 'chat', 'body/modelId');
    // active, configured, supported connection, URL allowed now: all checked by resolve
    const { target } = await this.models.resolve(model);
    const pick = <K extends keyof GenerationParams>(k: K, fallback: GenerationParams[K]) => (req[k] !== undefined ? req[k] : fallback);
    const params: GenerationParams = {
      temperature: pick('temperature', wm.temperature),
      maxTokens: pick('maxTokens', wm.maxTokens),
      topP: pick('topP', wm.topP),
      n: pick('n', wm.n),
      frequencyPenalty: pick('frequencyPenalty', wm.frequencyPenalty),
      presencePenalty: pick('presencePenalty', wm.presencePenalty),
      logitBias: pick('logitBias', wm.logitBias ?? null),
      stop: req.stop ?? null,
    };
    assertMaxTokensFit(model, params.maxTokens);
    // Without a configured maxTokens a default output cap is still sent (context-fit.ts).
    params.maxTokens = effectiveMaxTokens(params.maxTokens, contextWindowOf(model));
    const scope = w.row.chatHistoryType === 'USER' ? { workspaceId: w.row.id, onlyUserId: caller.userId } : { workspaceId: w.row.id };
    return {
      workspace: w.row,
      historyScope: req.threadId ? scope : null,
      threadId: req.threadId ?? randomUUID(),
      store,
      newTurns,
      plusIds: [...new Set(req.plusIds ?? [])],
      workspacePlusIds: w.plusIds.filter((id) => !req.plusIds?.includes(id)),
      model: {
        id: model.id,
        name: model.name,
        price: model.chatCredits,
        contextWindow: contextWindowOf(model),
        usesSystemPrompts: model.usesSystemPrompts,
        promptWrapper: model.promptWrapper ?? null,
      },
      settings: { systemInstructions: wm.systemInstructions, addedContext: wm.addedContext },
      target,
      params,
      tools,
    };
  }

  /** The question before this one: an earlier user turn of the request, else the thread's latest (one indexed read). */
  private async previousQuestion(plan: Plan): Promise<string | null> {
    const inRequest = previousFrom(plan, []);
    if (inRequest !== null || !plan.historyScope) return inRequest;
    return this.repo.lastQuestion(this.db, plan.threadId);
  }

  /** Context for the turn's question (or `query`, its rewrite), with `carry`'s key terms when it is a follow-up searched as is. */
  private retrieve(caller: Principal, plan: Plan, carry: string | null, query?: string) {
    return this.context.contextForTurn(caller, plan.workspace, {
      plusIds: plan.plusIds,
      workspacePlusIds: plan.workspacePlusIds,
      threadId: plan.historyScope ? plan.threadId : null,
      query: query ?? question(plan),
      carry,
      budgetTokens: contextBudget(plan),
    });
  }

  /** The entries the request names must all be visible (else 404), checked before anything is stored. */
  private async assertVisible(caller: Principal, plan: Plan): Promise<void> {
    if (plan.plusIds.length === 0) return;
    if ((await this.context.visibleIds(caller, plan.plusIds)).length !== plan.plusIds.length) throw notFound('Plus entry');
  }

  /** The follow-up rewritten by the turn's model from the conversation before it (follow-up.ts); null when the call failed. */
  private rewrite(
    plan: Plan,
    historyNewestFirst: ReadonlyArray<{ role: string; content: string }>,
    signal: AbortSignal | undefined,
  ): Promise<Rewritten | null> {
    const conversation = [...historyNewestFirst].reverse().concat(plan.newTurns.slice(0, questionIndex(plan)));
    return rewriteFollowUp(
      {
        target: plan.target,
        timeouts: this.timeouts,
        conversationOldestFirst: conversation,
        question: question(plan),
        ...(signal ? { signal } : {}),
      },
      (why) => this.onRewriteFailure(why),
    );
  }

  private async storeUserTurn(caller: Principal, plan: Plan, logId: string, hold: BudgetHold | null): Promise<NonNullable<StoredUserTurn>> {
    const now = new Date();
    const firstUser = plan.newTurns.find((m) => m.role === 'user') ?? plan.newTurns[0]!;
    const stored = await this.userTurns
      .add({
        reservation: hold?.inStatement ?? null,
        thread: { id: plan.threadId, teamId: caller.teamId, workspaceId: plan.workspace.id, userId: caller.userId, title: titleFrom(firstUser.content) },
        existing: plan.historyScope,
        messages: plan.newTurns.map((m, i) => ({ id: randomUUID(), role: m.role, content: m.content, created: new Date(now.getTime() + i) })),
        store: plan.store,
        log: {
          id: logId,
          teamId: caller.teamId,
          userId: caller.userId,
          workspaceId: plan.workspace.id,
          threadId: plan.store ? plan.threadId : null,
          modelId: plan.model.id,
          modelName: plan.model.name,
          prompt: promptText(plan.newTurns.at(-1)!),
          created: now,
        },
        now,
      })
      .catch(async (err: unknown) => {
        await hold?.release();
        // A budget or rate limit refused the reservation in the statement: the whole statement was undone.
        throw (hold?.inStatement && (await this.usage.refusal(caller, err))) || err;
      });
    if (!stored) {
      await hold?.release();
      throw notFound('Thread');
    }
    return stored;
  }

  /**
   * What the thread's history adds to a follow-up's prompt at most — its last exchange (the
   * answered prompt + answer), as statement 1's reservation counts it (usageSql.reserve): asked
   * only by counters that reserve before statement 1; kept per thread, read once when unknown.
   */
  private async lastExchangeTokens(threadId: string): Promise<number> {
    const hit = this.exchanges.get(threadId);
    if (hit !== undefined) return hit;
    const n = await this.repo.lastExchangeTokens(this.db, threadId);
    this.exchanges.set(threadId, n);
    return n;
  }

  /**
   * The ledger row of an attempt: the provider's usage when it answered; an interrupted call
   * (or a failure after text arrived) what was sent and received, counted by Atrium; a failure
   * before any text, nothing (providers do not bill refused calls). A budgeted turn is charged at
   * most the credits it reserved (`reserved`; null without a budget).
   */
  private ledgerEntry(
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
      credits: this.usage.creditsOf(plan.model.price, billed.promptTokens, billed.completionTokens, reserved),
      status: o.kind === 'answered' ? 'ok' : o.kind === 'interrupted' ? 'interrupted' : 'error',
      created,
    };
  }

  /**
   * The one place the provider is called and its failure classified. Yields deltas, returns how
   * the call ended. A context-length refusal (before anything streamed) is retried once with a
   * prompt refitted on less history; `fit` then holds the prompt that was sent. With `cap`, the
   * answer ends at that many output tokens in Atrium's count (finish reason `length`): a stream is
   * cut there and the provider's stream closed, a whole answer shortened.
   */
  private async *callProvider(plan: Plan, fit: Fit, opts: TurnOptions, cap: number | null): AsyncGenerator<TurnEvent, Outcome> {
    const adapter = getAdapter(plan.target.apiBase, plan.target.connectionType);
    const request = {
      target: plan.target,
      messages: fit.assembled.messages,
      params: plan.params,
      ...(plan.tools ? { tools: plan.tools } : {}),
      timeouts: this.timeouts,
      ...(opts.signal ? { signal: opts.signal } : {}),
    };
    const refit = (pe: ProviderError): ChatMessage[] | null => {
      const again = refitAfterContextError(fit.input, fit.assembled, pe);
      if (!again) return null;
      fit.assembled = again;
      return again.messages;
    };
    let content = '';
    // Tool calls count toward `cap` like text (their name and arguments): a call cut there ends the
    // answer with finish reason `length`, as a provider's own cap does, and its arguments are incomplete.
    const calls: ToolCall[] = [];
    try {
      if (!opts.stream) {
        const r = await completeWithContextRetry(adapter, request, refit);
        let over = cap !== null && countTokens(r.content) > cap;
        content = over ? firstTokens(r.content, cap!) : r.content;
        yield { type: 'delta', content };
        let room = cap === null ? Infinity : cap - countTokens(content);
        for (const [index, c] of (r.toolCalls ?? []).entries()) {
          if (over) break;
          const kept = withinCap(c, room);
          if (!kept) {
            over = true;
            break;
          }
          room -= kept.tokens;
          over = kept.call.arguments.length < c.arguments.length;
          calls.push({ ...c, arguments: kept.call.arguments });
          yield { type: 'tool_call', call: { index, id: c.id, name: c.name, arguments: kept.call.arguments } };
        }
        return { kind: 'answered', content, toolCalls: calls, finishReason: over ? 'length' : r.finishReason, usage: r.usage };
      }
      let outputTokens = 0;
      for await (const ev of streamWithContextRetry(adapter, request, refit)) {
        if (ev.type === 'done') return { kind: 'answered', content, toolCalls: calls, finishReason: ev.finishReason, usage: ev.usage };
        if (ev.type === 'tool_call') {
          const kept = cap === null ? { call: ev.call, tokens: 0 } : withinCap(ev.call, cap - outputTokens);
          if (kept) {
            addToolCallDelta(calls, kept.call);
            yield { type: 'tool_call', call: kept.call };
            outputTokens += kept.tokens;
          }
          if (!kept || kept.call.arguments.length < ev.call.arguments.length) {
            return { kind: 'answered', content, toolCalls: calls, finishReason: 'length', usage: ZERO_USAGE };
          }
          continue;
        }
        if (cap !== null) {
          // Counted piece by piece: never fewer tokens than the text has as a whole, so the cut is never late.
          const n = countTokens(ev.content);
          if (outputTokens + n > cap) {
            const rest = firstTokens(ev.content, cap - outputTokens);
            content += rest;
            if (rest) yield { type: 'delta', content: rest };
            return { kind: 'answered', content, toolCalls: calls, finishReason: 'length', usage: ZERO_USAGE };
          }
          outputTokens += n;
        }
        content += ev.content;
        yield ev;
      }
      // A stream that ended without a final event: keep what came, as complete text.
      return { kind: 'answered', content, toolCalls: calls, finishReason: 'stop', usage: ZERO_USAGE };
    } catch (err) {
      const error = classifyProviderError(err);
      return opts.signal?.aborted ? { kind: 'interrupted', content, error } : { kind: 'failed', content, error };
    }
  }

  /** Statement 2. A write that lost a race with a thread delete (FK violation) is retried once: the retry sees the thread gone. */
  private async storeAnswer(rec: AnswerRecord): Promise<boolean> {
    try {
      return (await this.answers.add(rec)).kept;
    } catch {
      return (await this.repo.recordAnswers(this.db, [rec]))[0]!.kept;
    }
  }
}

/** What a turn may cost at most, before its history is known (the statement adds the history's size). */
function costOf(plan: Plan, contextText: string, extraTokens: number): TurnCost {
  const window = plan.model.contextWindow ?? DEFAULT_CONTEXT_WINDOW;
  const maxOutput = plan.params.maxTokens ?? 0;
  const texts = [plan.settings.systemInstructions ?? '', plan.settings.addedContext ?? '', contextText];
  const promptTokens =
    texts.reduce((n, t) => n + (t ? countTokens(t) : 0), 0) +
    plan.newTurns.reduce((n, m) => n + tokensOf(m), 0) +
    4 +
    toolDefinitionTokens(plan.tools) +
    extraTokens;
  return { modelId: plan.model.id, price: plan.model.price, promptTokens, promptCap: window - maxOutput, maxOutput };
}

/** The most retrieved context may take of the turn's model's window. */
function contextBudget(plan: Plan): number {
  return Math.max(256, Math.floor((plan.model.contextWindow ?? DEFAULT_CONTEXT_WINDOW) * CONTEXT_SHARE));
}

/** The provider reported no usage: estimate with the same tokenizer used for budgets. */
function estimateIfMissing(reported: Usage, estimatedPromptTokens: number, content: string): Usage {
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
function answerRecord(
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

function endEvent(o: Outcome, usage: Usage, created: Date, kept: boolean): TurnEvent {
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

/** The user turn before the request's question: in the request itself, else the newest in the thread's history. */
function previousFrom(plan: Plan, historyNewestFirst: ReadonlyArray<{ role: string; content: string }>): string | null {
  const earlier = plan.newTurns.slice(0, questionIndex(plan)).filter((m) => m.role === 'user');
  if (earlier.length > 0) return earlier.at(-1)!.content;
  return historyNewestFirst.find((m) => m.role === 'user')?.content ?? null;
}

/** The tool definitions' size in o200k tokens (they are sent with the prompt). */
function toolDefinitionTokens(tools: ToolOptions | null): number {
  return tools ? countTokens(JSON.stringify(tools.definitions)) : 0;
}

/** Adds a streamed piece to the calls it belongs to (the first piece of a call opens it). */
function addToolCallDelta(calls: ToolCall[], d: ToolCallDelta): void {
  const c = (calls[d.index] ??= { id: '', name: '', arguments: '' });
  if (d.id) c.id = d.id;
  if (d.name) c.name = d.name;
  c.arguments += d.arguments;
}

/** The index of the request's question: its last user turn (a tool exchange may follow it). */
function questionIndex(plan: Plan): number {
  const i = plan.newTurns.findLastIndex((m) => m.role === 'user');
  return i >= 0 ? i : plan.newTurns.length - 1;
}

/** What context is searched for and a follow-up rewritten from: the question's text. */
function question(plan: Plan): string {
  return plan.newTurns[questionIndex(plan)]!.content;
}

/** A tool call as the prompt log shows it: `[tool call <id>] name(arguments)`. */
export function toolCallText(c: ToolCall): string {
  return `[tool call ${c.id}] ${c.name}(${c.arguments})`;
}

/** The prompt log's prompt: the request's last turn; a tool result as `[tool result <id>] content`. */
function promptText(m: ChatMessage): string {
  return m.role === 'tool' ? `[tool result ${m.toolCallId ?? ''}] ${m.content}` : m.content;
}

/** The prompt log's response: the answer's text, then one line per tool call. */
function responseText(o: Outcome): string {
  const calls = o.kind === 'answered' ? o.toolCalls : [];
  return [o.content, ...calls.map(toolCallText)].filter((t) => t.length > 0).join('\n');
}

/**
 * A tool call (or a streamed piece of one) within `room` output tokens: its name (when the piece
 * carries it) and as much of its arguments as fits; null when not even the name fits.
 */
function withinCap<C extends { name?: string; arguments: string }>(call: C, room: number): { call: C; tokens: number } | null {
  const nameTokens = call.name ? countTokens(call.name) : 0;
  if (nameTokens > room) return null;
  const argTokens = countTokens(call.arguments);
  if (nameTokens + argTokens <= room) return { call, tokens: nameTokens + argTokens };
  const args = firstTokens(call.arguments, room - nameTokens);
  return { call: { ...call, arguments: args }, tokens: nameTokens + countTokens(args) };
}
