import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/client.js';
import type { StoredSource } from '../../db/schema.js';
import { AppError, notFound, type ErrorKind } from '../../errors.js';
import { observe } from '../../observability/hooks.js';
import type { ChatMessage, ProviderTimeouts, ToolCall, ToolCallDelta, ToolOptions, Usage } from '../../providers/types.js';
import type { McpService } from '../mcp/service.js';
import type { ModelsService } from '../models/service.js';
import type { PlusService } from '../plus/service.js';
import type { PromptLogsService } from '../prompt-logs/service.js';
import { threadScope, type Principal } from '../../policy/index.js';
import type { UsageService } from '../usage/service.js';
import type { WorkspacesService } from '../workspaces/service.js';
import { calibrationFrom } from './context-fit.js';
import type { ChatImages } from './images.js';
import { assemblePrompt, type AssemblyInput } from './prompt.js';
import { runWithTools, toolTurnCost } from './tool-loop.js';
import { REWRITE_ALLOWANCE_TOKENS, rewriteFollowUp, type Rewritten } from './follow-up.js';
import { callProvider, ZERO_USAGE, type Fit, type Outcome } from './provider-call.js';
import { branchOf, VersionsRepo, type TurnBranch } from './versions.js';
import type { HistoryMessage } from './repo.js';
import type { ChatAnswerT, ChatCompletionRequestT } from './schema.js';
import { contextBudget, costOf, planTurn, previousFrom, question, questionIndex, toolDefinitionTokens, type Plan } from './turn-plan.js';
import type { AnswerJournal } from './answer-journal.js';
import { TurnStore } from './turn-store.js';
import { answerRecord, endEvent, estimateIfMissing, ledgerEntry, responseText } from './turn-records.js';

/**
 * A chat turn, start to end, in the order it happens (docs/ARCHITECTURE.md "A chat turn").
 * `TurnService.run` is the one pipeline; the plain route (`complete`), the stream route and an
 * OpenAI-compatible route only differ in how they consume its events. Its steps live beside it:
 * turn-plan.ts (checks, model, parameters, tools, the cost ceiling), provider-call.ts (the provider
 * call) and turn-records.ts (what is stored of the outcome). The provider target (with the
 * decrypted key) lives in the turn's plan and never leaves these files.
 */
export type TurnEvent =
  | { type: 'start'; threadId: string; messageId: string; modelId: string }
  | { type: 'sources'; sources: StoredSource[] }
  | { type: 'delta'; content: string }
  /** an image the model made (image models), stored with the answer; `data` (base64) stays inside the server but for /v1/images */
  | { type: 'image'; id: string; mimeType: string; width: number; height: number; data: string }
  /** a piece of a tool call (streamed: as the provider sends them; plain: one per call, whole) */
  | { type: 'tool_call'; call: ToolCallDelta }
  /** the turn calls one of the workspace's tools (tool-loop.ts); the stream's `tool_call` event */
  | { type: 'tool_run'; call: ToolCall }
  /** what that tool answered (`ok: false`: the error the model was given) */
  | { type: 'tool_result'; id: string; ok: boolean; content: string }
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
  /** the model must be an image model (`imageGen`): /v1/images/generations (400 otherwise) */
  imagesOnly?: boolean;
}

/** Context from Plus entries (implemented by PlusService). */
export type ContextSource = Pick<PlusService, 'contextForTurn' | 'visibleIds'>;

const NO_CONTEXT = Object.freeze({ text: '', sources: [] as StoredSource[] });
/** How long a thread's last-exchange size is kept (it is only ever replaced by this node's own answers). */
export class TurnService {
  private readonly versions = new VersionsRepo();
  private readonly store: TurnStore;

  constructor(
    private readonly db: Db,
    private readonly workspaces: WorkspacesService,
    private readonly models: ModelsService,
    private readonly context: ContextSource,
    private readonly logs: PromptLogsService,
    private readonly timeouts: ProviderTimeouts,
    private readonly usage: UsageService,
    private readonly tools: Pick<McpService, 'toolboxFor'>,
    private readonly images: ChatImages,
    /** a follow-up's rewrite failed (the turn carried terms instead): reported, not thrown */
    private readonly onRewriteFailure: (why: string) => void = () => {},
    /** the embedded database on disk, on its own thread: answers acknowledged once journaled and sent (turn-store.ts) */
    journal: AnswerJournal | null = null,
    /** a journaled answer's statement failed after the answer went out (it stays in the journal): reported */
    onStoreFailure: (err: unknown) => void = () => {},
  ) {
    this.store = new TurnStore(db, images, usage, journal, onStoreFailure);
  }

  /** At start-up, before any request: the answers an earlier process acknowledged but did not store, stored (TurnStore.replayJournal). */
  replayJournal(): Promise<{ stored: number; refused: string[] }> {
    return this.store.replayJournal();
  }

  /** At close, once no request is left: the journaled answers in flight stored, the journal closed. */
  closeJournal(): Promise<void> {
    return this.store.closeJournal();
  }

  /**
   * One turn as events: `start`, `sources` (when context was used), `delta`…, then `done` or
   * `error`. Getting the first event validates the request and stores the user's turn; its
   * failures are thrown as AppErrors (4xx) before any event exists, so a stream opens only
   * after them. Every later failure becomes an `error` event, and the turn's prompt log always
   * ends final (ok, error or interrupted).
   */
  async *run(caller: Principal, workspaceId: string, request: TurnRequest, opts: TurnOptions): AsyncGenerator<TurnEvent> {
    // 1. Check and resolve everything; nothing is stored yet. A regenerate or an edit first finds
    //    where it attaches in its thread (versions.ts).
    const branch = await this.branch(caller, workspaceId, request);
    const req = branch?.request ?? request;
    const plan = await planTurn({ workspaces: this.workspaces, models: this.models, tools: this.tools }, caller, workspaceId, req, opts.store !== false);
    //    Images are read in the image workers and checked (type by content, size, count); a refusal stores nothing.
    this.images.assertCanAnswer(plan, opts.imagesOnly === true);
    await this.images.readTurnImages(plan, req.images, questionIndex(plan));
    // 2. Context from the entries the request names: an invisible one is a 404, still before storing.
    //    A follow-up is searched with the thread's previous question's key terms carried (docs/API.md, Follow-ups).
    //    A workspace that has follow-ups rewritten by the model searches after statement 1 (step 4):
    //    the rewrite reads the thread's history and is paid under the turn's reservation.
    const named = plan.plusIds.length + plan.workspacePlusIds.length > 0;
    const rewrites = plan.workspace.followUpSearch === 'rewrite' && (plan.historyScope !== null || previousFrom(plan, []) !== null);
    if (named && rewrites) await this.assertVisible(caller, plan);
    let context = named && !rewrites ? await this.retrieve(caller, plan, await this.previousQuestion(plan, branch)) : NO_CONTEXT;
    // 2b. Reserve what the call may cost against the caller's budgets (null: none applies). Where
    //     the counters live decides whether statement 1 takes the reservation or it is taken here.
    //     A turn that may rewrite reserves for the rewrite and for context it has not retrieved yet.
    const extra = rewrites ? REWRITE_ALLOWANCE_TOKENS + contextBudget(plan) : 0;
    const hold = await this.usage.hold(
      caller,
      plan.model.price,
      () => (plan.toolbox ? toolTurnCost(costOf(plan, context.text, extra)) : costOf(plan, context.text, extra)),
      plan.historyScope ? () => this.store.lastExchangeTokens(plan.threadId) : null,
    );
    // 3. Store the user's turn and pending log; the same statement checks the thread and reads its
    //    history (and, with budgets on the database, reserves): a refusal (429) stores nothing.
    //    A turn that needs nothing back from it — a new or ephemeral thread (no history, no files),
    //    no reservation taken by the statement, no rewrite, no workspace tools, no images — starts
    //    its provider call first, so the call and the write overlap; its events wait for the write
    //    (nothing is said before the turn is stored), and the call is aborted if the write fails.
    //    Answered in one piece (not streamed), such a turn is written whole once answered: one
    //    statement instead of two, none beside the call (docs/DECISIONS.md, "Gateway hot path").
    //    So is a plain follow-up of that kind, which reads its thread first (the check, the history,
    //    the files) and writes nothing before its call either.
    const ids = { messageId: randomUUID(), logId: randomUUID() };
    const started = Date.now();
    const cap = hold ? (plan.params.maxTokens ?? null) : null;
    // What needs nothing back from statement 1 but, for a follow-up, its history: no regenerate or
    // edit, no rewrite, no workspace tools, no image model, no reservation in the statement, no images.
    const nothingFirst =
      branch === null && !rewrites && !plan.toolbox && !plan.model.imageGen && !hold?.inStatement && plan.newTurns.every((m) => !m.images?.length);
    const early = nothingFirst && plan.historyScope === null ? this.startEarly(plan, context, opts, cap) : null;
    let deferred: ReturnType<TurnStore['deferUserTurn']> | null = null;
    if (nothingFirst && !opts.stream) {
      try {
        deferred = this.store.deferUserTurn(caller, plan, ids.logId, early ? null : await this.store.readFollowUp(plan));
      } catch (err) {
        await hold?.release();
        throw err;
      }
    }
    let stored: Awaited<ReturnType<TurnStore['storeUserTurn']>>;
    if (deferred) stored = deferred.stored;
    else {
      try {
        stored = await this.store.storeUserTurn(caller, plan, ids.logId, hold, branch);
      } catch (err) {
        await early?.cancel();
        throw err;
      }
    }
    hold?.stored(stored.reservedCredits);
    let finished = false;
    try {
      let rewrite: Rewritten | null = null;
      let fit: Fit;
      if (early) fit = early.fit;
      else {
        // 4. A thread with files searches them (known only from the write above); a follow-up in a
        //    workspace that rewrites them is searched as the model rewrote it (carrying terms if that failed).
        if (rewrites && (named || stored.threadHasFiles)) {
          rewrite = await this.rewrite(plan, stored.history, opts.signal);
          const query = rewrite?.rewrite?.query;
          context = await this.retrieve(caller, plan, query ? null : previousFrom(plan, stored.history), query);
        } else if (!named && stored.threadHasFiles) context = await this.retrieve(caller, plan, previousFrom(plan, stored.history));
        // 5. The prompt: system text, history fitted to the window (in the provider's own token count,
        //    calibrated on the thread's previous answer by this model), the new turn(s).
        fit = this.fitPrompt(plan, context, stored.history);
        await this.images.loadBytes(fit.assembled.messages);
      }
      yield { type: 'start', threadId: plan.threadId, messageId: ids.messageId, modelId: plan.model.id };
      if (context.sources.length > 0) yield { type: 'sources', sources: context.sources };
      // 6. The provider call.
      //    A budgeted turn's answer is cut at the output tokens it reserved, whatever the provider does with its cap.
      //    With the workspace's tools, the calls the model asks for run and it is asked again (tool-loop.ts).
      let outcome = early
        ? yield* early.events()
        : plan.toolbox
          ? yield* runWithTools({ ...plan, toolbox: plan.toolbox }, fit, opts, cap, this.timeouts, (spent, next) =>
              hold ? this.usage.creditsOf(plan.model.price, spent.promptTokens + next, spent.completionTokens + (cap ?? 0)) <= hold.reservedCredits() : true,
            )
          : yield* callProvider(plan, fit, opts, cap, this.timeouts);
      if (outcome.kind === 'answered' && !outcome.tools?.calls.length)
        this.usage.notePromptCount(plan.model.id, outcome.usage.promptTokens, fit.assembled.estimatedPromptTokens);
      // 7. Store the answer and finish the log (statement 2), then say how the turn ended.
      const estimated = fit.assembled.estimatedPromptTokens;
      const usage = estimateIfMissing(outcome.kind === 'answered' ? outcome.usage : ZERO_USAGE, estimated, responseText(outcome));
      const created = new Date();
      // An image model's images are read like a user's before they are stored (a provider's bytes are not trusted either).
      const made = await this.images.readAnswer(outcome, ids.messageId, created);
      outcome = made.outcome;
      const record = answerRecord(
        plan,
        { ...ids, parentId: stored.questionId },
        context.sources,
        outcome,
        usage,
        estimated,
        created,
        Date.now() - started,
        rewrite?.rewrite ?? null,
      );
      if (record.message) Object.assign(record.message, { images: made.images, imageRows: made.rows });
      const ledger = ledgerEntry(this.usage, caller, plan, ids.logId, outcome, usage, created, rewrite?.used ?? null, hold?.reservedCredits() ?? null);
      // A stream's `done` waits for the statement (its first token does not); a plain answer may be acknowledged once journaled.
      const kept = await this.store.storeAnswer(
        { ...record, ledger, settle: hold?.settlementInStatement() ?? null, ...(deferred ? { turn: deferred.turn } : {}) },
        !opts.stream,
      );
      finished = true;
      hold?.settled(ledger.credits);
      observe.chatTurn(ledger);
      if (kept && record.message) this.store.exchangeStored(plan.threadId, usage.promptTokens + usage.completionTokens);
      if (kept || !plan.store) yield* made.events;
      yield endEvent(outcome, usage, created, kept);
    } finally {
      // A bug or a lost database between the two writes (or a consumer that stopped listening).
      if (!finished) {
        await early?.cancel();
        const reason = 'internal: the turn stopped before its answer was stored';
        // a turn written whole has no log yet: it gets one, failed (the attempt is never lost from the logs)
        await (
          deferred ? this.logs.failUnwritten(deferred.turn.log, Date.now() - started, reason) : this.logs.fail(ids.logId, Date.now() - started, reason)
        ).catch(() => undefined);
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
    opts: { store?: boolean; imagesOnly?: boolean } = {},
  ): Promise<ChatAnswerT & { toolCalls?: ToolCall[]; generated?: Array<Extract<TurnEvent, { type: 'image' }>> }> {
    let start: Extract<TurnEvent, { type: 'start' }> | undefined;
    let sources: StoredSource[] = [];
    let content = '';
    const images: Array<Extract<TurnEvent, { type: 'image' }>> = [];
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
        case 'tool_run':
        case 'tool_result':
          break; // the workspace's tools: kept with the answer's message (GET the thread)
        case 'image':
          images.push(ev);
          break;
        case 'error':
          throw errorOfEvent(ev);
        case 'done':
          return {
            ...(toolCalls.length > 0 ? { toolCalls } : {}),
            ...(images.length > 0 ? { generated: images } : {}),
            threadId: start!.threadId,
            messageId: start!.messageId,
            modelId: start!.modelId,
            message: {
              role: 'assistant',
              content,
              ...(images.length > 0 ? { images: images.map((i) => ({ id: i.id, mimeType: i.mimeType, width: i.width, height: i.height })) } : {}),
            },
            finishReason: ev.finishReason,
            usage: ev.usage,
            sources,
            created: ev.created,
          };
      }
    }
    throw new Error('turn ended without done or error');
  }

  /** Step 5: the prompt — system text, history fitted to the window (calibrated on the thread's previous answer by this model), the new turn(s). */
  private fitPrompt(plan: Plan, context: { text: string }, history: readonly HistoryMessage[]): Fit {
    const input: AssemblyInput = {
      systemInstructions: plan.settings.systemInstructions,
      addedContext: plan.settings.addedContext,
      retrievedContext: context.text || null,
      historyNewestFirst: this.images.history(history, plan),
      newTurns: plan.newTurns,
      contextWindow: plan.model.contextWindow,
      maxTokens: plan.params.maxTokens ?? null,
      usesSystemPrompts: plan.model.usesSystemPrompts,
      promptWrapper: plan.model.promptWrapper,
      calibration: calibrationFrom(history, plan.model.id, this.usage.promptRatioOf(plan.model.id)),
      toolTokens: toolDefinitionTokens(plan.tools),
    };
    return { input, assembled: assemblePrompt(input) };
  }

  /**
   * The provider call of a turn that needs nothing from statement 1 (no history, no files), started
   * before that statement is written: its first event is asked for at once (which sends the
   * request), later ones only as the turn reads them — after the write. `cancel` aborts it (the
   * write failed, or the turn ended first).
   */
  private startEarly(plan: Plan, context: { text: string }, opts: TurnOptions, cap: number | null) {
    const fit = this.fitPrompt(plan, context, []);
    const abort = new AbortController();
    const signal = opts.signal ? AbortSignal.any([opts.signal, abort.signal]) : abort.signal;
    const call = callProvider(plan, fit, { ...opts, signal }, cap, this.timeouts);
    const first = call.next();
    first.catch(() => undefined); // read (or dropped by cancel) later
    let done = false;
    return {
      fit,
      async *events(): AsyncGenerator<TurnEvent, Outcome> {
        try {
          for (let r = await first; ; r = await call.next()) {
            if (r.done) {
              done = true;
              return r.value;
            }
            yield r.value;
          }
        } finally {
          if (!done) {
            done = true;
            abort.abort();
            await call.return(undefined as never).catch(() => undefined);
          }
        }
      },
      async cancel(): Promise<void> {
        if (done) return;
        done = true;
        abort.abort();
        await first.catch(() => undefined);
        await call.return(undefined as never).catch(() => undefined);
      },
    };
  }

  // ---- the steps that read or write through the service (the others: turn-plan.ts, provider-call.ts, turn-records.ts)

  /** The question before this one: an earlier user turn of the request, else the latest on the thread's path the turn continues. */
  private async previousQuestion(plan: Plan, branch: TurnBranch | null): Promise<string | null> {
    const inRequest = previousFrom(plan, []);
    if (inRequest !== null || !plan.historyScope) return inRequest;
    return this.versions.lastQuestion(this.db, plan.threadId, branch ? branch.parentId : undefined);
  }

  /** A regenerate or an edit: where it attaches (404 when the message it names is out of reach); null for other turns. */
  private async branch(caller: Principal, workspaceId: string, req: TurnRequest): Promise<TurnBranch | null> {
    if (req.regenerate === undefined && req.editOf === undefined) return null;
    const { row } = await this.workspaces.load(caller, workspaceId);
    return branchOf(this.versions, this.db, threadScope(caller, row), req);
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
}
