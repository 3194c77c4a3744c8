import { randomUUID } from 'node:crypto';
import { badRequest } from '../../errors.js';
import { countTokens } from '../../ingest/tokens.js';
import type { ChatMessage, GenerationParams, ProviderTarget, ToolOptions } from '../../providers/types.js';
import type { McpService, Toolbox } from '../mcp/service.js';
import { assertMaxTokensFit, contextWindowOf, DEFAULT_CONTEXT_WINDOW, type ModelsService } from '../models/service.js';
import { threadScope, type Principal } from '../../policy/index.js';
import type { TurnCost } from '../usage/service.js';
import type { WorkspaceRow } from '../workspaces/repo.js';
import type { ThreadScope } from './repo.js';
import type { WorkspacesService } from '../workspaces/service.js';
import { effectiveMaxTokens } from './context-fit.js';
import { tokensOf } from './prompt.js';
import type { TurnRequest } from './turns.js';

/**
 * Step 1 of a turn (turns.ts): the request checked and resolved into a plan (workspace, model,
 * parameters, tools, provider target) before anything is stored, and what the plan alone decides:
 * the most the turn may cost and how much retrieved context it may take.
 */

/** Everything checked and resolved before anything is stored. */
export interface Plan {
  workspace: WorkspaceRow;
  historyScope: ThreadScope | null;
  threadId: string;
  /** false: the thread is ephemeral (TurnOptions.store) */
  store: boolean;
  newTurns: ChatMessage[];
  plusIds: string[];
  /** the workspace's own Plus entries (beyond plusIds): drawn on when visible to the caller, skipped otherwise */
  workspacePlusIds: string[];
  model: {
    id: string;
    name: string;
    price: number;
    contextWindow: number | null;
    usesSystemPrompts: boolean;
    promptWrapper: { value: string } | null;
    /** takes images (images.ts) */
    hasVision: boolean;
    /** answers with images (providers/images.ts) */
    imageGen: boolean;
  };
  settings: { systemInstructions: string | null; addedContext: string | null };
  target: ProviderTarget;
  params: GenerationParams;
  /** the tools offered (the request's own, TurnRequest.tools, else the workspace's MCP tools), null: none */
  tools: ToolOptions | null;
  /** the workspace's MCP tools, which the turn calls itself (tool-loop.ts); null: none, or the request brought its own tools */
  toolbox: Toolbox | null;
}

/** Retrieved context may use at most this share of the model's window. */
const CONTEXT_SHARE = 0.4;

/** What planning reads: the caller's workspace and the model it names. */
export interface PlanDeps {
  workspaces: Pick<WorkspacesService, 'load'>;
  models: Pick<ModelsService, 'findUsable' | 'assertKind' | 'resolve'>;
  tools: Pick<McpService, 'toolboxFor'>;
}

/** Checks the request and resolves everything the turn needs; throws 4xx AppErrors, stores nothing. */
export async function planTurn(deps: PlanDeps, caller: Principal, workspaceId: string, req: TurnRequest, store: boolean): Promise<Plan> {
  if (!store && req.threadId)
    throw badRequest('validation_failed', 'A turn that continues a thread is stored', [
      { path: 'body/threadId', message: 'cannot be combined with store: false' },
    ]);
  const w = await deps.workspaces.load(caller, workspaceId);
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
  const model = await deps.models.findUsable(caller.teamId, wm.modelId);
  if (!model) throw badRequest('model_not_available', `Model ${wm.modelName} is no longer available to this team`);
  deps.models.assertKind(model, 'chat', 'body/modelId');
  // active, configured, supported connection, URL allowed now: all checked by resolve
  const { target } = await deps.models.resolve(model);
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
  // A request that brings tools of its own (/v1) answers its calls itself; otherwise the workspace's MCP tools are offered.
  const toolbox = req.tools ? null : await deps.tools.toolboxFor(caller.teamId, { mcpServerIds: w.mcpServerIds, allowedTools: w.row.allowedTools ?? null });
  const scope = threadScope(caller, w.row);
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
      hasVision: model.hasVision,
      imageGen: model.imageGen,
    },
    settings: { systemInstructions: wm.systemInstructions, addedContext: wm.addedContext },
    target,
    params,
    tools: tools ?? (toolbox ? { definitions: toolbox.definitions } : null),
    toolbox,
  };
}

/** What a turn may cost at most, before its history is known (the statement adds the history's size). */
export function costOf(plan: Plan, contextText: string, extraTokens: number): TurnCost {
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
export function contextBudget(plan: Plan): number {
  return Math.max(256, Math.floor((plan.model.contextWindow ?? DEFAULT_CONTEXT_WINDOW) * CONTEXT_SHARE));
}

/** The tool definitions' size in o200k tokens (they are sent with the prompt). */
export function toolDefinitionTokens(tools: ToolOptions | null): number {
  return tools ? countTokens(JSON.stringify(tools.definitions)) : 0;
}

/** The user turn before the request's question: in the request itself, else the newest in the thread's history. */
export function previousFrom(plan: Plan, historyNewestFirst: ReadonlyArray<{ role: string; content: string }>): string | null {
  const earlier = plan.newTurns.slice(0, questionIndex(plan)).filter((m) => m.role === 'user');
  if (earlier.length > 0) return earlier.at(-1)!.content;
  return historyNewestFirst.find((m) => m.role === 'user')?.content ?? null;
}

/** The index of the request's question: its last user turn (a tool exchange may follow it). */
export function questionIndex(plan: Plan): number {
  const i = plan.newTurns.findLastIndex((m) => m.role === 'user');
  return i >= 0 ? i : plan.newTurns.length - 1;
}

/** What context is searched for and a follow-up rewritten from: the question's text. */
export function question(plan: Plan): string {
  return plan.newTurns[questionIndex(plan)]!.content;
}
