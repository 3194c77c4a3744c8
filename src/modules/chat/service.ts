import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/client.js';
import { GroupCommit } from '../../db/group-commit.js';
import type { StoredSource, StoredUsage } from '../../db/schema.js';
import { AppError, badRequest, forbidden, notFound, type ErrorKind } from '../../errors.js';
import { countTokens } from '../../ingest/tokens.js';
import { classifyProviderError, describeForLog, getAdapter, isSupportedConnection, type ProviderError } from '../../providers/index.js';
import type { ChatMessage, GenerationParams, ProviderRequest, ProviderTimeouts, Usage } from '../../providers/types.js';
import type { ModelsService } from '../models/service.js';
import type { PromptLogsRepo } from '../prompt-logs/repo.js';
import { isTeamAdmin, type Principal } from '../teams/service.js';
import type { WorkspaceRow } from '../workspaces/repo.js';
import type { WorkspacesService, WorkspaceWithModels } from '../workspaces/service.js';
import { defaultGreeting, defaultSamplePrompts } from './defaults.js';
import { assemblePrompt, refitAfterContextError, titleFrom, type AssembledPrompt, type AssemblyInput } from './prompt.js';
// fidelity: context fitting, default output cap and the context-length retry live in context-fit.ts.
import { calibrationFrom, completeWithContextRetry, effectiveMaxTokens, streamWithContextRetry, type CalibratedUsage } from './context-fit.js';
import { ChatRepo, type AnswerRecord, type MessageRow, type ThreadScope, type ThreadWithCount, type UserTurnRecord } from './repo.js';
import type { ChatCompletionRequestT } from './schema.js';

/** Context drawn from Plus entries for one turn (implemented by the Plus module). */
export interface ContextRetriever {
  contextForTurn(
    caller: Principal,
    workspace: WorkspaceRow,
    q: { plusIds: string[]; threadId: string | null; query: string; budgetTokens: number },
  ): Promise<{ text: string; sources: StoredSource[] }>;
  /** Titles of Plus entries the workspace's chats draw on, for default greetings and prompts. */
  titlesFor(caller: Principal, workspace: WorkspaceRow): Promise<string[]>;
}

/** Everything one turn needs after its user message is stored and before the provider answers. */
export interface Turn {
  threadId: string;
  messageId: string;
  modelId: string;
  modelName: string;
  logId: string;
  sources: StoredSource[];
  request: Omit<ProviderRequest, 'signal'>;
  estimatedPromptTokens: number;
  started: number;
  /** fidelity: what the prompt was fitted from, to refit it once after a context-length refusal. */
  fit: { input: AssemblyInput; assembled: AssembledPrompt };
}

export type ChatStreamEvent =
  | { type: 'sources'; sources: StoredSource[] }
  | { type: 'delta'; content: string }
  | { type: 'done'; finishReason: string; usage: Usage }
  | { type: 'error'; kind: ErrorKind; code: string; detail: string };

export interface ChatAnswerT {
  threadId: string;
  messageId: string;
  modelId: string;
  message: { role: 'assistant'; content: string };
  finishReason: string;
  usage: Usage;
  sources: StoredSource[];
  created: string;
}

const HISTORY_LIMIT = 200;
/** Retrieved context may use at most this share of the model's window. */
const CONTEXT_SHARE = 0.4;

function threadView(t: ThreadWithCount) {
  return {
    id: t.id,
    workspaceId: t.workspaceId,
    title: t.title,
    userId: t.userId,
    created: t.created.toISOString(),
    updated: t.updated.toISOString(),
    messageCount: t.messageCount,
  };
}

function messageView(m: MessageRow) {
  return {
    id: m.id,
    role: m.role,
    content: m.content,
    modelId: m.modelId,
    created: m.created.toISOString(),
    usage: m.usage ?? null,
    sources: m.sources ?? [],
    status: m.status,
  };
}

/** Seconds in `Retry-After` when a rate-limiting provider named none. */
const DEFAULT_PROVIDER_RETRY_AFTER = 10;

export function upstreamError(pe: ProviderError): AppError {
  // fidelity: a provider's rate limit is passed on as our 429 with its Retry-After (DECISIONS.md).
  if (pe.kind === 'upstream_rate_limited') {
    const e = new AppError('rate_limited', pe.code, pe.message);
    e.retryAfterSeconds = pe.retryAfterSeconds ?? DEFAULT_PROVIDER_RETRY_AFTER;
    return e;
  }
  return new AppError(pe.kind === 'timeout' ? 'upstream_timeout' : 'upstream', pe.code, pe.message);
}

export class ChatService {
  private readonly repo = new ChatRepo();
  private retriever: ContextRetriever | null = null;
  private readonly userTurns = new GroupCommit<UserTurnRecord>((items) => this.repo.recordUserTurns(this.db, items));
  private readonly answers = new GroupCommit<AnswerRecord>((items) => this.repo.recordAnswers(this.db, items));

  constructor(
    private readonly db: Db,
    private readonly workspaces: WorkspacesService,
    private readonly models: ModelsService,
    private readonly logs: PromptLogsRepo,
    private readonly timeouts: ProviderTimeouts,
  ) {}

  setRetriever(r: ContextRetriever): void {
    this.retriever = r;
  }

  // ---- threads -------------------------------------------------------------------------

  private scopeFor(caller: Principal, ws: WorkspaceRow): ThreadScope {
    return ws.chatHistoryType === 'USER' ? { workspaceId: ws.id, onlyUserId: caller.userId } : { workspaceId: ws.id };
  }

  /** A thread the caller may see in a workspace they may see; 404 otherwise. */
  async loadThread(caller: Principal, workspaceId: string, threadId: string) {
    const { row: ws } = await this.workspaces.load(caller, workspaceId);
    const thread = await this.repo.findThread(this.db, this.scopeFor(caller, ws), threadId);
    if (!thread) throw notFound('Thread');
    return { ws, thread };
  }

  /** For files added to a thread from a chat: the thread, if the caller may see it. */
  async resolveThread(caller: Principal, threadId: string): Promise<{ threadId: string; workspace: WorkspaceRow }> {
    const row = await this.repo.findThreadInTeam(this.db, caller.teamId, threadId);
    if (!row) throw notFound('Thread');
    const { ws } = await this.loadThread(caller, row.workspaceId, threadId);
    return { threadId, workspace: ws };
  }

  async listThreads(caller: Principal, workspaceId: string) {
    const { row: ws } = await this.workspaces.load(caller, workspaceId);
    return (await this.repo.listThreads(this.db, this.scopeFor(caller, ws))).map(threadView);
  }

  async getThread(caller: Principal, workspaceId: string, threadId: string) {
    const { thread } = await this.loadThread(caller, workspaceId, threadId);
    const messages = await this.repo.messages(this.db, thread.id);
    return { ...threadView(thread), messages: messages.map(messageView) };
  }

  private requireOwnOrAdmin(caller: Principal, thread: ThreadWithCount): void {
    if (thread.userId !== caller.userId && !isTeamAdmin(caller)) {
      throw forbidden('Only the user who started this thread or a team owner/admin may change it');
    }
  }

  async renameThread(caller: Principal, workspaceId: string, threadId: string, title: string) {
    const { thread } = await this.loadThread(caller, workspaceId, threadId);
    this.requireOwnOrAdmin(caller, thread);
    await this.repo.renameThread(this.db, thread.id, title.trim() || thread.title);
    return this.getThread(caller, workspaceId, threadId);
  }

  async deleteThread(caller: Principal, workspaceId: string, threadId: string): Promise<void> {
    const { thread } = await this.loadThread(caller, workspaceId, threadId);
    this.requireOwnOrAdmin(caller, thread);
    await this.repo.deleteThreads(this.db, [thread.id]);
  }

  /** Deletes the visible threads the caller owns (all visible ones for a team owner/admin). */
  async deleteHistory(caller: Principal, workspaceId: string): Promise<number> {
    const { row: ws } = await this.workspaces.load(caller, workspaceId);
    const threads = await this.repo.listThreads(this.db, this.scopeFor(caller, ws));
    const mine = threads.filter((t) => isTeamAdmin(caller) || t.userId === caller.userId);
    return this.repo.deleteThreads(this.db, mine.map((t) => t.id));
  }

  // ---- greeting and sample prompts -----------------------------------------------------

  private async facts(caller: Principal, w: WorkspaceWithModels) {
    const first = w.models[0];
    return {
      name: w.row.name,
      modelNames: w.models.map((m) => m.modelName),
      systemInstructions: first?.systemInstructions ?? null,
      contextTitles: this.retriever ? await this.retriever.titlesFor(caller, w.row) : [],
    };
  }

  async greeting(caller: Principal, workspaceId: string): Promise<{ content: string }> {
    const w = await this.workspaces.load(caller, workspaceId);
    if (w.row.greeting?.trim()) return { content: w.row.greeting };
    return { content: defaultGreeting(await this.facts(caller, w)) };
  }

  async samplePrompts(caller: Principal, workspaceId: string, limit: number): Promise<Array<{ content: string }>> {
    const w = await this.workspaces.load(caller, workspaceId);
    const own = w.row.samplePrompts ?? [];
    const prompts = own.length > 0 ? own : defaultSamplePrompts(await this.facts(caller, w));
    return prompts.slice(0, limit).map((content) => ({ content }));
  }

  // ---- completions ---------------------------------------------------------------------

  /**
   * Validate a completion request, assemble its prompt, and store the user's turn (and a
   * pending prompt log) before any provider is called.
   */
  async startTurn(caller: Principal, workspaceId: string, req: ChatCompletionRequestT): Promise<Turn> {
    const w = await this.workspaces.load(caller, workspaceId);
    const newTurns: ChatMessage[] = req.messages ?? (req.prompt !== undefined ? [{ role: 'user', content: req.prompt }] : []);
    if (newTurns.length === 0) {
      throw badRequest('validation_failed', 'Send messages or prompt', [{ path: 'body/messages', message: 'one of messages or prompt is required' }]);
    }
    const last = newTurns.at(-1)!;
    if (last.role !== 'user' || !last.content.trim()) {
      throw badRequest('validation_failed', 'The last message must be a non-empty user message', [
        { path: `body/messages/${newTurns.length - 1}`, message: 'must be a non-empty user message' },
      ]);
    }

    const wm = req.modelId ? w.models.find((m) => m.modelId === req.modelId) : w.models[0];
    if (!wm) {
      throw req.modelId
        ? badRequest('model_not_in_workspace', 'That model is not one of the workspace\u2019s models', [{ path: 'body/modelId', message: 'is not in this workspace' }])
        : badRequest('workspace_has_no_model', 'The workspace has no model: add one first');
    }
    const model = await this.models.findUsable(caller.teamId, wm.modelId);
    if (!model) throw badRequest('model_not_available', `Model ${wm.modelName} is no longer available to this team`);
    if (!isSupportedConnection(model.apiBase, model.connectionType)) {
      throw badRequest('model_not_configured', `Model ${model.name}: ${model.connectionType} is not supported for ${model.apiBase}`);
    }
    const resolved = await this.models.resolve(model);

    const params: GenerationParams = {
      temperature: req.temperature !== undefined ? req.temperature : wm.temperature,
      maxTokens: req.maxTokens !== undefined ? req.maxTokens : wm.maxTokens,
      topP: req.topP !== undefined ? req.topP : wm.topP,
      n: req.n !== undefined ? req.n : wm.n,
      frequencyPenalty: req.frequencyPenalty !== undefined ? req.frequencyPenalty : wm.frequencyPenalty,
      presencePenalty: req.presencePenalty !== undefined ? req.presencePenalty : wm.presencePenalty,
      logitBias: req.logitBias !== undefined ? req.logitBias : (wm.logitBias ?? null),
    };
    if (params.maxTokens != null && model.contextWindow != null && params.maxTokens > model.contextWindow) {
      throw badRequest('validation_failed', `maxTokens must not exceed the model's contextWindow (${model.contextWindow})`, [
        { path: 'body/maxTokens', message: `must be <= ${model.contextWindow}` },
      ]);
    }
    // fidelity: without a configured maxTokens a default cap is sent (context-fit.ts).
    params.maxTokens = effectiveMaxTokens(params.maxTokens, model.contextWindow);

    let thread: ThreadWithCount | undefined;
    if (req.threadId) {
      thread = await this.repo.findThread(this.db, this.scopeFor(caller, w.row), req.threadId);
      if (!thread) throw notFound('Thread');
    }
    const threadId = thread?.id ?? randomUUID();

    let context = { text: '', sources: [] as StoredSource[] };
    const plusIds = [...new Set(req.plusIds ?? [])];
    if (this.retriever && (plusIds.length > 0 || thread)) {
      const window = model.contextWindow ?? 8192;
      context = await this.retriever.contextForTurn(caller, w.row, {
        plusIds,
        threadId: thread?.id ?? null,
        query: last.content,
        budgetTokens: Math.max(256, Math.floor(window * CONTEXT_SHARE)),
      });
    }

    const history = thread ? await this.repo.recentMessages(this.db, thread.id, HISTORY_LIMIT) : [];
    const fitInput: AssemblyInput = {
      systemInstructions: wm.systemInstructions,
      addedContext: wm.addedContext,
      retrievedContext: context.text || null,
      historyNewestFirst: history.map((m) => ({ role: m.role, content: m.content })),
      newTurns,
      contextWindow: model.contextWindow,
      maxTokens: params.maxTokens,
      usesSystemPrompts: model.usesSystemPrompts,
      promptWrapper: model.promptWrapper ?? null,
      calibration: calibrationFrom(history, model.id), // fidelity
    };
    const assembled = assemblePrompt(fitInput);

    const turn: Turn = {
      threadId,
      messageId: randomUUID(),
      modelId: model.id,
      modelName: model.name,
      logId: randomUUID(),
      sources: context.sources,
      request: { target: resolved.target, messages: assembled.messages, params, timeouts: this.timeouts },
      estimatedPromptTokens: assembled.estimatedPromptTokens,
      started: Date.now(),
      fit: { input: fitInput, assembled },
    };

    const now = new Date();
    const firstUser = newTurns.find((m) => m.role === 'user') ?? last;
    await this.userTurns.add({
      thread: { id: threadId, teamId: caller.teamId, workspaceId: w.row.id, userId: caller.userId, title: titleFrom(firstUser.content) },
      messages: newTurns.map((m, i) => ({ id: randomUUID(), role: m.role, content: m.content, created: new Date(now.getTime() + i) })),
      log: { id: turn.logId, modelId: model.id, modelName: model.name, prompt: last.content },
      now,
    });
    return turn;
  }

  private usage(turn: Turn, content: string, reported: Usage): Usage {
    if (reported.totalTokens > 0 || reported.promptTokens > 0 || reported.completionTokens > 0) return reported;
    // The provider reported none: estimate with the same tokenizer used for budgets.
    const promptTokens = turn.estimatedPromptTokens;
    const completionTokens = countTokens(content);
    return { promptTokens, completionTokens, totalTokens: promptTokens + completionTokens };
  }

  /** Store the assistant's answer (complete or interrupted) with its prompt log, in one statement (group-committed). */
  async finishTurn(
    turn: Turn,
    r: { content: string; finishReason: string; usage: Usage; status: 'ok' | 'interrupted'; failure?: ProviderError },
  ): Promise<{ usage: StoredUsage; created: Date }> {
    const usage = this.usage(turn, r.content, r.usage);
    // fidelity: the local estimate is stored beside the provider's own count, to calibrate the thread's next fit.
    const storedUsage: CalibratedUsage = r.usage.promptTokens > 0 ? { ...usage, localPromptTokens: turn.estimatedPromptTokens } : usage;
    const created = new Date();
    await this.answers.add({
      threadId: turn.threadId,
      message:
        r.status === 'ok' || r.content.length > 0
          ? { id: turn.messageId, content: r.content, modelId: turn.modelId, usage: storedUsage, sources: turn.sources, status: r.status }
          : null,
      log: {
        id: turn.logId,
        response: r.content,
        promptTokens: usage.promptTokens,
        completionTokens: usage.completionTokens,
        latencyMs: Date.now() - turn.started,
        status: r.failure ? 'error' : r.status,
        error: r.failure ? describeForLog(r.failure) : r.status === 'interrupted' ? 'client disconnected' : null,
      },
      now: created,
    });
    return { usage, created };
  }

  /** Record a failed provider call: the user's turn stays, the log says what went wrong. */
  async failTurn(turn: Turn, pe: ProviderError): Promise<void> {
    await this.logs.finish(this.db, turn.logId, {
      latencyMs: Date.now() - turn.started,
      status: 'error',
      error: describeForLog(pe),
    });
  }

  async complete(caller: Principal, workspaceId: string, req: ChatCompletionRequestT, signal?: AbortSignal): Promise<ChatAnswerT> {
    const turn = await this.startTurn(caller, workspaceId, req);
    const adapter = getAdapter(turn.request.target.apiBase, turn.request.target.connectionType);
    let result;
    try {
      result = await completeWithContextRetry(adapter, { ...turn.request, ...(signal ? { signal } : {}) }, (pe) => this.refit(turn, pe));
    } catch (err) {
      const pe = classifyProviderError(err);
      if (signal?.aborted) {
        // The client hung up: the attempt is interrupted, not a provider failure.
        await this.finishTurn(turn, { content: '', finishReason: 'interrupted', usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 }, status: 'interrupted' });
      } else {
        await this.failTurn(turn, pe);
      }
      throw upstreamError(pe);
    }
    const { usage, created } = await this.finishTurn(turn, { ...result, status: 'ok' });
    return {
      threadId: turn.threadId,
      messageId: turn.messageId,
      modelId: turn.modelId,
      message: { role: 'assistant', content: result.content },
      finishReason: result.finishReason,
      usage,
      sources: turn.sources,
      created: created.toISOString(),
    };
  }

  /** fidelity: a shorter prompt after a context-length refusal (once), or null when no history is left to drop. */
  private refit(turn: Turn, pe: ProviderError): ChatMessage[] | null {
    const again = refitAfterContextError(turn.fit.input, turn.fit.assembled, pe);
    if (!again) return null;
    turn.fit.assembled = again;
    turn.estimatedPromptTokens = again.estimatedPromptTokens;
    return again.messages;
  }

  /**
   * The events of a streamed turn (after startTurn). When `signal` aborts (the client went away)
   * the provider call is cancelled and what arrived is kept, marked interrupted.
   */
  async *streamTurn(turn: Turn, signal: AbortSignal): AsyncGenerator<ChatStreamEvent> {
    if (turn.sources.length > 0) yield { type: 'sources', sources: turn.sources };
    const adapter = getAdapter(turn.request.target.apiBase, turn.request.target.connectionType);
    let content = '';
    try {
      for await (const ev of streamWithContextRetry(adapter, { ...turn.request, signal }, (pe) => this.refit(turn, pe))) {
        if (ev.type === 'delta') {
          content += ev.content;
          yield ev;
        } else {
          const { usage } = await this.finishTurn(turn, { content, finishReason: ev.finishReason, usage: ev.usage, status: 'ok' });
          yield { type: 'done', finishReason: ev.finishReason, usage };
          return;
        }
      }
      // A stream that ended without a final event: keep what came, as complete text.
      const { usage } = await this.finishTurn(turn, { content, finishReason: 'stop', usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 }, status: 'ok' });
      yield { type: 'done', finishReason: 'stop', usage };
    } catch (err) {
      const pe = classifyProviderError(err);
      if (signal.aborted) {
        await this.finishTurn(turn, { content, finishReason: 'interrupted', usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 }, status: 'interrupted' });
        return;
      }
      if (content.length > 0) {
        await this.finishTurn(turn, { content, finishReason: 'error', usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 }, status: 'interrupted', failure: pe });
      } else {
        await this.failTurn(turn, pe);
      }
      const e = upstreamError(pe);
      yield { type: 'error', kind: e.kind, code: e.code, detail: e.message };
    }
  }
}
