/**
 * A turn's plan: everything checked and resolved before anything is stored, and what follows
 * from it alone — its cost ceiling for budgets, its share of the window for context, the question
 * before it.
 */
import { randomUUID } from 'node:crypto';
import { badRequest } from '../../errors.js';
import { countTokens } from '../../ingest/tokens.js';
import type { ChatMessage, GenerationParams, ProviderTarget } from '../../providers/types.js';
import { assertMaxTokensFit, type ModelsService } from '../models/service.js';
import type { Principal } from '../teams/service.js';
import type { TurnCost } from '../usage/service.js';
import type { WorkspaceRow } from '../workspaces/repo.js';
import type { WorkspacesService } from '../workspaces/service.js';
import { effectiveMaxTokens } from './context-fit.js';
import type { ChatCompletionRequestT } from './schema.js';

/** Retrieved context may use at most this share of the model's window. */
const CONTEXT_SHARE = 0.4;
const DEFAULT_WINDOW = 8192;

/** Everything checked and resolved before anything is stored. */
export interface Plan {
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
}

/** Check and resolve the turn: the workspace (visible), the new turn(s), the model and the parameters. */
export async function planTurn(
  workspaces: WorkspacesService,
  models: ModelsService,
  caller: Principal,
  workspaceId: string,
  req: ChatCompletionRequestT,
  store: boolean,
): Promise<Plan> {
  if (!store && req.threadId)
    throw badRequest('validation_failed', 'A turn that continues a thread is stored', [
      { path: 'body/threadId', message: 'cannot be combined with store: false' },
    ]);
  const w = await workspaces.load(caller, workspaceId);
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
      ? badRequest('model_not_in_workspace', 'That model is not one of the workspace\u2019s models', [
          { path: 'body/modelId', message: 'is not in this workspace' },
        ])
      : badRequest('workspace_has_no_model', 'The workspace has no model: add one first');
  }
  const model = await models.findUsable(caller.teamId, wm.modelId);
  if (!model) throw badRequest('model_not_available', `Model ${wm.modelName} is no longer available to this team`);
  models.assertKind(model, 'chat', 'body/modelId');
  // active, configured, supported connection, URL allowed now: all checked by resolve
  const { target } = await models.resolve(model);
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
  params.maxTokens = effectiveMaxTokens(params.maxTokens, model.contextWindow);
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
      contextWindow: model.contextWindow,
      usesSystemPrompts: model.usesSystemPrompts,
      promptWrapper: model.promptWrapper ?? null,
    },
    settings: { systemInstructions: wm.systemInstructions, addedContext: wm.addedContext },
    target,
    params,
  };
}

/** What a turn may cost at most, before its history is known (the statement adds the history's size). */
export function costOf(plan: Plan, contextText: string, extraTokens: number): TurnCost {
  const window = plan.model.contextWindow ?? DEFAULT_WINDOW;
  const maxOutput = plan.params.maxTokens ?? 0;
  const texts = [plan.settings.systemInstructions ?? '', plan.settings.addedContext ?? '', contextText, ...plan.newTurns.map((m) => m.content)];
  const promptTokens = texts.reduce((n, t) => n + (t ? countTokens(t) : 0), 0) + 4 * (plan.newTurns.length + 1) + extraTokens;
  return { modelId: plan.model.id, price: plan.model.price, promptTokens, promptCap: window - maxOutput, maxOutput };
}

/** The most retrieved context may take of the turn's model's window. */
export function contextBudget(plan: Plan): number {
  return Math.max(256, Math.floor((plan.model.contextWindow ?? DEFAULT_WINDOW) * CONTEXT_SHARE));
}

/** The user turn before the request's last one: in the request itself, else the newest in the thread's history. */
export function previousFrom(plan: Plan, historyNewestFirst: ReadonlyArray<{ role: string; content: string }>): string | null {
  const earlier = plan.newTurns.slice(0, -1).filter((m) => m.role === 'user');
  if (earlier.length > 0) return earlier.at(-1)!.content;
  return historyNewestFirst.find((m) => m.role === 'user')?.content ?? null;
}
