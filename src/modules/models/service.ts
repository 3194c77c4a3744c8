import { changedFields, recordAudit } from '../audit/record.js';
import { TtlCache } from '../../cache.js';
import type { Db } from '../../db/client.js';
import { AppError, badRequest, idTaken, notFound } from '../../errors.js';
import { isSupportedConnection, supportsEmbeddings, supportsRerank } from '../../providers/index.js';
import type { ApiBase, ConnectionType, ProviderTarget } from '../../providers/types.js';
import { assertProviderUrlAllowed } from '../../providers/url-guard.js';
import { probeContextWindow, windowWarning } from '../../providers/window-probe.js';
import { keyHint, maskSecret, type SecretBox } from '../../security/secret-box.js';
import { requireManageModel, requireTeamAdmin, type Principal } from '../../policy/index.js';
import { connectionTestCall, testFailure } from './connection-test.js';
import { SYSTEM_SCOPE } from '../../db/schema/models.js';
import { ModelsRepo, type ModelInsert, type ModelRow, type ModelWithMembership } from './repo.js';
import { MODEL_SETTING_KEYS, type ConnectionTestT, type ModelRequestT, type ModelSettingKey, type ModelT } from './schema.js';

const API_BASE_ALIASES: Record<string, ApiBase> = {
  OPENAI: 'OPENAI',
  ANTHROPIC: 'ANTHROPIC',
  GOOGLE: 'GOOGLE',
  VENDOR_A: 'OPENAI',
  VENDOR_B: 'ANTHROPIC',
  VENDOR_C: 'GOOGLE',
};

const CONNECTION_ALIASES: Record<string, ConnectionType> = { URL: 'URL', AZURE: 'AZURE', CLOUD_PROVIDER_A: 'AZURE' };

export function toModelView(m: ModelWithMembership): ModelT {
  const settings = Object.fromEntries(MODEL_SETTING_KEYS.map((k) => [k, m[k] ?? null])) as Pick<ModelT, ModelSettingKey>;
  return {
    id: m.id,
    name: m.name,
    apiKey: maskSecret(m.apiKeyLast4),
    url: m.url,
    connectionType: m.connectionType,
    apiBase: m.apiBase,
    ...settings,
    settingsAvailable: m.settingsAvailable ?? [],
    created: m.created.toISOString(),
    updated: m.updated.toISOString(),
    system: m.isSystem,
    inTeam: m.inTeam,
    ...windowOf(m),
  };
}

/** Turns fit into this many tokens when a model neither declares a window nor had one reported. */
export const DEFAULT_CONTEXT_WINDOW = 8192;

/**
 * The window a model's turns are fitted into: the one declared, else the one its provider reported
 * when the model was saved (providers/window-probe.ts), else null (the turn's default applies).
 */
export function contextWindowOf(model: Pick<ModelRow, 'contextWindow' | 'probedContextWindow'>): number | null {
  return model.contextWindow ?? model.probedContextWindow ?? null;
}

function windowOf(m: ModelRow): Pick<ModelT, 'contextWindowUsed' | 'contextWindowSource' | 'contextWindowProbe'> {
  if (m.contextWindow !== null) return { contextWindowUsed: m.contextWindow, contextWindowSource: 'declared', contextWindowProbe: null };
  if (m.probedContextWindow !== null) {
    return { contextWindowUsed: m.probedContextWindow, contextWindowSource: 'probed', contextWindowProbe: m.probedContextWindowSource };
  }
  return { contextWindowUsed: DEFAULT_CONTEXT_WINDOW, contextWindowSource: 'default', contextWindowProbe: null };
}

/**
 * The one `maxTokens` rule (workspace settings and per-request overrides alike): an answer may
 * not be longer than the model's context window.
 */
export function assertMaxTokensFit(model: Pick<ModelRow, 'contextWindow'>, maxTokens: number | null | undefined): void {
  if (maxTokens != null && model.contextWindow != null && maxTokens > model.contextWindow) {
    throw badRequest('validation_failed', `maxTokens must not exceed the model's contextWindow (${model.contextWindow})`, [
      { path: 'body/maxTokens', message: `must be <= ${model.contextWindow}` },
    ]);
  }
}

/** A model ready to call: its provider target with the key decrypted, and its prompt settings. */
export interface ResolvedModel {
  row: ModelRow;
  target: ProviderTarget;
}

/** Chat turns look up the same few models again and again; a change on this node invalidates at once. */
const CACHE_TTL_MS = 2_000;

/**
 * A cache that copies model settings (the workspaces' one): built before ModelsService and handed
 * to it, so a change drops the copies at once without the models module knowing its holders.
 */
export interface ModelDependent {
  forgetModel(modelId: string): void;
}

export class ModelsService {
  private readonly repo = new ModelsRepo();
  private readonly usable = new TtlCache<string, ModelRow>(CACHE_TTL_MS);
  private readonly resolved = new TtlCache<string, ResolvedModel>(CACHE_TTL_MS);

  constructor(
    private readonly db: Db,
    private readonly secrets: SecretBox,
    private readonly urlPolicy: 'allow-private' | 'public-only',
    /** caches of later modules that hold model settings, told whenever a model changes or leaves a team */
    private readonly dependents: readonly ModelDependent[] = [],
  ) {}

  private changed(modelId: string): void {
    this.usable.deleteWhere((m) => m.id === modelId);
    this.resolved.deleteWhere((r) => r.row.id === modelId);
    for (const d of this.dependents) d.forgetModel(modelId);
  }

  async list(caller: Principal, q: { includeSystem: boolean; modelRating?: number }, activeOnly: boolean) {
    const rows = await this.repo.list(this.db, caller.teamId, {
      includeSystem: q.includeSystem,
      activeOnly,
      ...(q.modelRating !== undefined ? { minRating: q.modelRating } : {}),
    });
    return rows.map(toModelView);
  }

  /** Of the given ids, the visible models (`activeOnly`: only active ones), in the order asked. */
  async listByIds(caller: Principal, ids: string[], activeOnly: boolean) {
    const unique = [...new Set(ids)];
    const rows = await this.repo.list(this.db, caller.teamId, { includeSystem: true, activeOnly, ids: unique });
    const byId = new Map(rows.map((r) => [r.id, r]));
    return unique.flatMap((id) => (byId.has(id) ? [toModelView(byId.get(id)!)] : []));
  }

  async get(caller: Principal, id: string): Promise<ModelT> {
    const m = await this.repo.findVisible(this.db, caller.teamId, id);
    if (!m) throw notFound('Model');
    return toModelView(m);
  }

  async create(caller: Principal | null, req: ModelRequestT, opts: { system: boolean; teamId?: string }): Promise<ModelT> {
    if (caller) {
      requireManageModel(caller, opts.system);
    }
    if (!req.name) throw badRequest('validation_failed', 'name is required', [{ path: 'body/name', message: 'is required' }]);
    const values = await this.toColumns(req);
    this.checkConnection(values.apiBase ?? 'OPENAI', values.connectionType ?? 'URL');
    this.checkKind(values.kind ?? 'chat', values.apiBase ?? 'OPENAI', values.connectionType ?? 'URL');
    const teamId = opts.system ? null : (caller?.teamId ?? opts.teamId ?? null);
    if (!opts.system && !teamId) throw badRequest('bad_request', 'A team model needs a team');
    const row = await this.db.transaction(async (tx) => {
      // Taken: a model the caller's team sees (its own, or a system model, which every team sees);
      // another team's model of this id is no concern (ids are per team). A system model's id must
      // be free everywhere, so that no team ever sees two models of one id.
      if (req.id && (await this.repo.scopesOf(tx, req.id, teamId ? [teamId, SYSTEM_SCOPE] : null)).length > 0) throw idTaken('model');
      const inserted = await this.repo.insert(tx, { ...values, name: req.name!, teamId, isSystem: opts.system, ...(req.id ? { id: req.id } : {}) });
      if (teamId) await this.repo.addToTeam(tx, teamId, inserted);
      await recordAudit(tx, {
        action: 'model.create',
        actor: caller,
        teamId,
        target: { type: 'model', id: inserted.id },
        details: { name: inserted.name, system: opts.system },
      });
      return inserted;
    });
    return this.afterSave({ ...row, inTeam: teamId !== null });
  }

  /**
   * Best effort, after the write: ask the provider for the window it serves (providers/window-probe.ts).
   * A declared contextWindow larger than that gets a warning; without one, the reported window is
   * kept on the model and used (null clears an earlier report). Never fails the request.
   */
  private async afterSave(row: ModelWithMembership): Promise<ModelT> {
    const view = toModelView(row);
    if (!row.baseModel) return view;
    const target: ProviderTarget = {
      apiBase: row.apiBase,
      connectionType: row.connectionType,
      url: row.url,
      apiKey: row.apiKeyEnc ? this.secrets.open(row.apiKeyEnc) : null,
      baseModel: row.baseModel,
    };
    const probed = await probeContextWindow(target);
    if (row.contextWindow !== null) {
      const warning = windowWarning(row.contextWindow, probed);
      return warning ? { ...view, warnings: [warning] } : view;
    }
    if ((probed?.tokens ?? null) === row.probedContextWindow && (probed?.source ?? null) === row.probedContextWindowSource) return view;
    const saved = await this.repo.setProbedWindow(this.db, row, probed);
    if (!saved) return view; // deleted meanwhile
    this.changed(row.id);
    return toModelView({ ...saved, inTeam: row.inTeam });
  }

  /** Create or update a system model from the operator's configuration (idempotent by id). */
  async upsertSystemModel(req: ModelRequestT & { id: string; name: string }): Promise<void> {
    const values = await this.toColumns(req);
    await this.db.transaction(async (tx) => {
      const scopes = await this.repo.scopesOf(tx, req.id, null);
      if (scopes.includes(SYSTEM_SCOPE)) await this.repo.update(tx, { scope: SYSTEM_SCOPE, id: req.id }, { ...values, name: req.name });
      else if (scopes.length > 0) throw new Error(`system model ${req.id}: a team's model has this id; give the system model another`);
      else await this.repo.insert(tx, { ...values, id: req.id, name: req.name, teamId: null, isSystem: true });
    });
    this.changed(req.id);
  }

  async update(caller: Principal, id: string, req: ModelRequestT): Promise<ModelT> {
    const current = await this.repo.findVisible(this.db, caller.teamId, id);
    if (!current) throw notFound('Model');
    requireManageModel(caller, current.isSystem);
    if (req.id !== undefined && req.id !== id) throw badRequest('id_mismatch', 'The body id differs from the path id');
    const values = await this.toColumns(req);
    this.checkConnection(values.apiBase ?? current.apiBase, values.connectionType ?? current.connectionType);
    this.checkKind(values.kind ?? current.kind, values.apiBase ?? current.apiBase, values.connectionType ?? current.connectionType);
    const row = await this.db.transaction(async (tx) => {
      const updated = await this.repo.update(tx, current, { ...values, ...(req.name ? { name: req.name } : {}) });
      await recordAudit(tx, {
        action: 'model.update',
        actor: caller,
        target: { type: 'model', id },
        details: { name: updated.name, fields: changedFields(req) },
      });
      return updated;
    });
    this.changed(id);
    return this.afterSave({ ...row, inTeam: current.inTeam });
  }

  async addToTeam(caller: Principal, id: string): Promise<ModelT> {
    requireTeamAdmin(caller);
    const m = await this.repo.findVisible(this.db, caller.teamId, id);
    if (!m) throw notFound('Model');
    await this.db.transaction(async (tx) => {
      await this.repo.addToTeam(tx, caller.teamId, m);
      await recordAudit(tx, { action: 'model.update', actor: caller, target: { type: 'model', id }, details: { name: m.name, team: 'added' } });
    });
    return toModelView({ ...m, inTeam: true });
  }

  async removeFromTeam(caller: Principal, id: string): Promise<ModelT> {
    requireTeamAdmin(caller);
    const m = await this.repo.findVisible(this.db, caller.teamId, id);
    if (!m) throw notFound('Model');
    await this.db.transaction(async (tx) => {
      await this.repo.removeFromTeam(tx, caller.teamId, id);
      await recordAudit(tx, { action: 'model.update', actor: caller, target: { type: 'model', id }, details: { name: m.name, team: 'removed' } });
    });
    this.changed(id);
    return toModelView({ ...m, inTeam: false });
  }

  /**
   * Send one short prompt to the model's provider and report what came back: a chat model's
   * answer, or for an embedding model the size of the vector its embeddings endpoint returned
   * (checked against embeddingDimensions when that is set). A failure of the
   * provider (or of the model's configuration) is the test's answer, not an error of this call:
   * the caller is an owner/admin, so the upstream status and code are included. Nothing is
   * stored: no thread, no prompt log, no usage (docs/API.md, "Testing a model's connection").
   */
  async testConnection(caller: Principal, id: string, prompt: string): Promise<ConnectionTestT> {
    requireTeamAdmin(caller);
    const row = await this.repo.findVisible(this.db, caller.teamId, id);
    if (!row) throw notFound('Model');
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    let target: ProviderTarget;
    try {
      target = (await this.resolveNow({ ...row, active: true })).target;
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      return testFailure(elapsed(), { status: 400, code: err.code, detail: err.message }); // resolveNow only refuses with bad_request
    }
    return connectionTestCall(row, target, prompt, elapsed);
  }

  /** Ids among `ids` that the team does not use (for workspace validation). */
  async unusable(teamId: string, ids: string[]): Promise<string[]> {
    const ok = await this.repo.usableIds(this.db, teamId, ids);
    return ids.filter((id) => !ok.has(id));
  }

  /** Ids among `ids` that are not chat models, embedding or rerank (for workspace validation: a workspace chats). */
  async embeddingModelIds(teamId: string, ids: string[]): Promise<string[]> {
    const emb = await this.repo.embeddingIds(this.db, teamId, ids);
    return ids.filter((id) => emb.has(id));
  }

  async findUsable(teamId: string, id: string): Promise<ModelRow | undefined> {
    const key = `${teamId}:${id}`;
    return this.usable.load(key, () => this.repo.findUsable(this.db, teamId, id));
  }

  /** The provider target of a model, key decrypted; only for calling the provider, never for output. */
  async resolve(row: ModelRow): Promise<ResolvedModel> {
    const key = `${row.scope}/${row.id}:${row.updated.getTime()}`;
    const hit = this.resolved.get(key);
    if (hit) return hit;
    const r = await this.resolveNow(row);
    this.resolved.set(key, r);
    return r;
  }

  private async resolveNow(row: ModelRow): Promise<ResolvedModel> {
    if (!row.active) throw new AppError('bad_request', 'model_inactive', `Model ${row.name} is not active`);
    if (!row.baseModel) throw new AppError('bad_request', 'model_not_configured', `Model ${row.name} has no baseModel`);
    // the one call-time check of the connection (a row stored before a rule changed, a system model file)
    if (!isSupportedConnection(row.apiBase, row.connectionType)) {
      throw new AppError('bad_request', 'model_not_configured', `Model ${row.name}: ${row.connectionType} is not supported for ${row.apiBase}`);
    }
    if (row.url) await this.checkUrl(row.url);
    return {
      row,
      target: {
        apiBase: row.apiBase,
        connectionType: row.connectionType,
        url: row.url,
        apiKey: row.apiKeyEnc ? this.openKey(row) : null,
        baseModel: row.baseModel,
      },
    };
  }

  /** A key sealed under another SECRET_KEY (saved by a misconfigured node) is the model's state, not a bug. */
  private openKey(row: ModelRow): string {
    try {
      return this.secrets.open(row.apiKeyEnc!);
    } catch {
      throw new AppError(
        'bad_request',
        'model_key_unreadable',
        `The API key of model ${row.name} cannot be decrypted with this server's SECRET_KEY; an admin must enter it again`,
      );
    }
  }

  /** An embedding model needs a protocol with an embeddings API (ANTHROPIC has none); a rerank model, an OPENAI URL (providers/rerank.ts). */
  private checkKind(kind: ModelRow['kind'], apiBase: ApiBase, connectionType: ConnectionType = 'URL'): void {
    if (kind === 'embedding' && !supportsEmbeddings(apiBase)) {
      throw badRequest('validation_failed', `apiBase ${apiBase} has no embeddings API: an embedding model must be OPENAI or GOOGLE`, [
        { path: 'body/kind', message: `embedding is not supported for ${apiBase}` },
      ]);
    }
    if (kind === 'rerank' && !supportsRerank({ apiBase, connectionType })) {
      throw badRequest('validation_failed', 'a rerank model must be OPENAI with connectionType URL (a server answering POST {url}/rerank)', [
        { path: 'body/kind', message: `rerank is not supported for ${apiBase} ${connectionType}` },
      ]);
    }
  }

  /**
   * The one rule that a model is used for what it is (docs/API.md, "Embeddings"): a chat model
   * where an embedding model is needed, or the other way round, is a 400 naming the field.
   */
  assertKind(model: Pick<ModelRow, 'kind' | 'name'>, kind: ModelRow['kind'], path: string): void {
    if (model.kind === kind) return;
    const code = { chat: 'not_a_chat_model', embedding: 'not_an_embedding_model', rerank: 'not_a_rerank_model' }[kind];
    const a = (k: ModelRow['kind']) => (k === 'embedding' ? 'an embedding' : `a ${k}`);
    throw badRequest(
      code,
      kind === 'chat'
        ? `Model ${model.name} is ${a(model.kind)} model: it cannot answer chats`
        : `Model ${model.name} is ${a(model.kind)} model: choose a model whose kind is ${kind}`,
      [{ path, message: kind === 'chat' ? `is ${a(model.kind)} model` : `is not ${a(kind)} model` }],
    );
  }

  private checkConnection(apiBase: ApiBase, connectionType: ConnectionType): void {
    if (!isSupportedConnection(apiBase, connectionType)) {
      throw badRequest('validation_failed', `connectionType ${connectionType} is only supported with apiBase OPENAI`, [
        { path: 'body/connectionType', message: `is not supported for ${apiBase}` },
      ]);
    }
  }

  private async checkUrl(url: string): Promise<void> {
    try {
      await assertProviderUrlAllowed(url, this.urlPolicy);
    } catch (err) {
      throw new AppError('bad_request', 'provider_url_refused', (err as Error).message, [{ path: 'body/url', message: (err as Error).message }]);
    }
  }

  private async toColumns(req: ModelRequestT): Promise<Partial<ModelInsert>> {
    const out: Partial<ModelInsert> = {};
    if (req.url !== undefined) {
      if (req.url !== null) await this.checkUrl(req.url);
      out.url = req.url;
    }
    if (req.apiKey !== undefined) {
      out.apiKeyEnc = req.apiKey ? this.secrets.seal(req.apiKey) : null;
      out.apiKeyLast4 = req.apiKey ? keyHint(req.apiKey) : null;
    }
    if (req.apiBase !== undefined) out.apiBase = API_BASE_ALIASES[req.apiBase]!;
    if (req.connectionType !== undefined) out.connectionType = CONNECTION_ALIASES[req.connectionType]!;
    if (req.settingsAvailable !== undefined) out.settingsAvailable = req.settingsAvailable;
    for (const k of MODEL_SETTING_KEYS) if (req[k] !== undefined) (out as Record<string, unknown>)[k] = req[k];
    if (req.promptWrapper && !req.promptWrapper.value.includes('{{prompt}}')) {
      throw badRequest('validation_failed', 'promptWrapper.value must contain {{prompt}}', [
        { path: 'body/promptWrapper/value', message: 'must contain {{prompt}}' },
      ]);
    }
    return out;
  }
}
