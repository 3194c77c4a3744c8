import { TtlCache } from '../../cache.js';
import { withDeadline } from '../../deadline.js';
import type { Db, Executor } from '../../db/client.js';
import { AppError, badRequest, notFound } from '../../errors.js';
import type { ToolDefinition } from '../../providers/types.js';
import { assertProviderUrlAllowed, type ProviderUrlPolicy } from '../../providers/url-guard.js';
import type { SecretBox } from '../../security/secret-box.js';
import { recordAudit, type AuditAction as AuditActionName } from '../audit/record.js';
import { requireTeamAdmin, type Principal } from '../../policy/index.js';
import { LIST_TIMEOUT_MS, McpClients, type McpCallResult, type McpEndpoint, type McpTool } from './client.js';
import { McpRepo, type McpServerInsert, type McpServerRow } from './repo.js';
import type { CreateMcpServerBodyT, McpServerT, McpServerTestT, PatchMcpServerBodyT } from './schema.js';

/**
 * MCP servers as a team resource (docs/API.md, "MCP servers"): any member lists them, owners and
 * admins change and test them; another team's server is not found, exactly like a missing one.
 * Custom headers are sealed with the SecretBox that seals provider keys and never answered.
 * For a chat turn, `toolboxFor` gathers the tools of a workspace's servers (chat/tool-loop.ts runs them).
 */

/** The tools a turn may call, offered to the model under `definitions[].name`. */
export interface Toolbox {
  definitions: ToolDefinition[];
  /** how long one call may take (MCP_CALL_TIMEOUT_MS) */
  timeoutMs: number;
  /** Calls the tool offered as `name` with the model's JSON arguments; thrown: it could not be called (unknown tool, bad arguments, server failure, timeout, abort). */
  call(name: string, argumentsJson: string, signal: AbortSignal, timeoutMs: number): Promise<McpCallResult>;
}

/** What a workspace says of its tools. */
export interface WorkspaceTools {
  mcpServerIds: string[];
  /** null: every tool of its servers */
  allowedTools: string[] | null;
}

type AuditAction = Extract<AuditActionName, `mcp.${string}`>;

/** Turns re-read their workspace's servers at most this often (a change on this node drops them at once). */
const ROWS_TTL_MS = 2_000;
/** A tool name every protocol accepts (OpenAI's rule is the strictest). */
const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;
/** An HTTP header name (a token); a few the transport sets itself are not custom headers. */
const HEADER_NAME =
  /^(?!(?:host|content-length|content-type|accept|connection|transfer-encoding|mcp-session-id|mcp-protocol-version)$)[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/i;

export function view(r: McpServerRow): McpServerT {
  return {
    id: r.id,
    name: r.name,
    url: r.url,
    enabled: r.enabled,
    headerNames: r.headerNames,
    created: r.created.toISOString(),
    updated: r.updated.toISOString(),
  };
}

/** The name a tool is offered under: its own, with characters the protocols refuse replaced by `_`, at most 64. */
export function offeredName(name: string): string {
  return TOOL_NAME.test(name) ? name : name.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64) || 'tool';
}

export class McpService {
  private readonly repo = new McpRepo();
  private readonly clients: McpClients;
  private readonly rows = new TtlCache<string, McpServerRow[]>(ROWS_TTL_MS);

  constructor(
    private readonly db: Db,
    private readonly secrets: SecretBox,
    private readonly opts: { urlPolicy: ProviderUrlPolicy; callTimeoutMs: number },
    /** a server that could not be listed for a turn (its tools were left out): reported, not thrown */
    private readonly onUnreachable: (err: unknown, serverId: string) => void = () => {},
  ) {
    this.clients = new McpClients(opts.urlPolicy);
  }

  async list(caller: Principal): Promise<McpServerT[]> {
    return (await this.repo.list(this.db, caller.teamId)).map(view);
  }

  async get(caller: Principal, id: string): Promise<McpServerT> {
    return view(await this.load(caller, id));
  }

  async create(caller: Principal, body: CreateMcpServerBodyT): Promise<McpServerT> {
    requireTeamAdmin(caller);
    await this.checkUrl(body.url);
    const row = await this.db.transaction(async (tx) => {
      const r = await this.repo.insert(tx, {
        teamId: caller.teamId,
        name: body.name,
        url: body.url,
        enabled: body.enabled ?? true,
        ...this.sealed(body.headers ?? null),
      });
      await this.audit(tx, caller, 'mcp.create', r);
      return r;
    });
    return view(row);
  }

  async update(caller: Principal, id: string, body: PatchMcpServerBodyT): Promise<McpServerT> {
    requireTeamAdmin(caller);
    await this.load(caller, id);
    if (body.url !== undefined) await this.checkUrl(body.url);
    const values: Partial<McpServerInsert> = {
      ...(body.name !== undefined ? { name: body.name } : {}),
      ...(body.url !== undefined ? { url: body.url } : {}),
      ...(body.enabled !== undefined ? { enabled: body.enabled } : {}),
      ...(body.headers !== undefined ? this.sealed(body.headers) : {}),
    };
    const row = await this.db.transaction(async (tx) => {
      const r = await this.repo.update(tx, caller.teamId, id, values);
      if (!r) throw notFound('MCP server');
      await this.audit(tx, caller, 'mcp.update', r);
      return r;
    });
    this.changed(id);
    return view(row);
  }

  async delete(caller: Principal, id: string): Promise<void> {
    requireTeamAdmin(caller);
    const current = await this.load(caller, id);
    await this.db.transaction(async (tx) => {
      if (!(await this.repo.delete(tx, caller.teamId, id))) throw notFound('MCP server');
      await this.audit(tx, caller, 'mcp.delete', current);
    });
    this.changed(id);
  }

  /** Connects and lists the server's tools now (the cache refreshed); a server that cannot be reached is `ok: false` with why. */
  async test(caller: Principal, id: string): Promise<McpServerTestT> {
    requireTeamAdmin(caller);
    const row = await this.load(caller, id);
    try {
      const tools = await withDeadline(LIST_TIMEOUT_MS, (signal) => this.clients.listTools(this.endpoint(row), { fresh: true, signal }));
      return { ok: true, tools: tools.map((t) => ({ name: t.name, description: t.description })) };
    } catch (err) {
      return { ok: false, tools: [], error: describe(err) };
    }
  }

  /** Of these ids, the caller's team's servers (workspaces check their `mcpServerIds` with it). */
  async visibleIds(caller: Principal, ids: string[]): Promise<string[]> {
    return (await this.repo.findMany(this.db, caller.teamId, ids)).map((r) => r.id);
  }

  /**
   * The tools a turn in a workspace is offered: those of its enabled servers (in the workspace's
   * order; on a name both offer, the first server's), kept to `allowedTools` when set. A server
   * that cannot be listed now is left out (reported). Null when there is no tool.
   */
  async toolboxFor(teamId: string, ws: WorkspaceTools): Promise<Toolbox | null> {
    if (ws.mcpServerIds.length === 0) return null;
    const rows = (await this.serversOf(teamId, ws.mcpServerIds)).filter((r) => r.enabled);
    const listed = await Promise.all(
      rows.map(async (r) => {
        const ep = this.endpoint(r);
        try {
          return { ep, tools: await this.clients.listTools(ep) };
        } catch (err) {
          this.onUnreachable(err, r.id);
          return { ep, tools: [] as McpTool[] };
        }
      }),
    );
    const allowed = ws.allowedTools ? new Set(ws.allowedTools) : null;
    const byName = new Map<string, { ep: McpEndpoint; tool: McpTool }>();
    for (const { ep, tools } of listed) {
      for (const tool of tools) {
        const name = offeredName(tool.name);
        if (byName.has(name) || (allowed && !allowed.has(name) && !allowed.has(tool.name))) continue;
        byName.set(name, { ep, tool });
      }
    }
    if (byName.size === 0) return null;
    const definitions: ToolDefinition[] = [...byName].map(([name, { tool }]) => ({
      name,
      ...(tool.description ? { description: tool.description } : {}),
      parameters: parametersOf(tool.inputSchema),
    }));
    return {
      definitions,
      timeoutMs: this.opts.callTimeoutMs,
      call: async (name, argumentsJson, signal, timeoutMs) => {
        const found = byName.get(name);
        if (!found) throw new Error(`There is no tool named '${name.slice(0, 100)}'`);
        return this.clients.callTool(found.ep, found.tool.name, parseArguments(argumentsJson), signal, timeoutMs);
      },
    };
  }

  /** Closes the open connections (the app is closing). */
  close(): Promise<void> {
    return this.clients.close();
  }

  // ----

  private async load(caller: Principal, id: string): Promise<McpServerRow> {
    const row = await this.repo.find(this.db, caller.teamId, id);
    if (!row) throw notFound('MCP server');
    return row;
  }

  private async serversOf(teamId: string, ids: string[]): Promise<McpServerRow[]> {
    const key = `${teamId}:${ids.join(',')}`;
    return this.rows.load(key, async () => {
      const byId = new Map((await this.repo.findMany(this.db, teamId, ids)).map((r) => [r.id, r]));
      return ids.flatMap((id) => (byId.has(id) ? [byId.get(id)!] : []));
    });
  }

  private changed(id: string): void {
    this.rows.deleteWhere((rows) => rows.some((r) => r.id === id));
    this.clients.forget(id);
  }

  private endpoint(r: McpServerRow): McpEndpoint {
    const headers = r.headersEnc ? (JSON.parse(this.secrets.open(r.headersEnc)) as Record<string, string>) : {};
    return { id: r.id, url: r.url, headers, version: r.updated.toISOString() };
  }

  private sealed(headers: Record<string, string> | null): Pick<McpServerInsert, 'headersEnc' | 'headerNames'> {
    const names = headers ? Object.keys(headers) : [];
    for (const n of names) {
      if (!HEADER_NAME.test(n))
        throw badRequest('validation_failed', 'A header name is not a valid HTTP header name', [
          { path: `body/headers`, message: `'${n.slice(0, 100)}' is not a header name` },
        ]);
      if (/[\r\n\0]/.test(headers![n]!))
        throw badRequest('validation_failed', 'A header value may not hold line breaks', [{ path: `body/headers/${n}`, message: 'must be one line' }]);
    }
    const lower = new Set(names.map((n) => n.toLowerCase()));
    if (lower.size !== names.length) {
      throw badRequest('validation_failed', 'Two headers have the same name', [
        { path: 'body/headers', message: 'header names must differ (case-insensitively)' },
      ]);
    }
    return { headersEnc: names.length > 0 ? this.secrets.seal(JSON.stringify(headers)) : null, headerNames: names };
  }

  /** The same guard as model URLs (providers/url-guard.ts): link-local and metadata always refused, private networks by PROVIDER_URL_POLICY. */
  private async checkUrl(url: string): Promise<void> {
    try {
      await assertProviderUrlAllowed(url, this.opts.urlPolicy);
    } catch (err) {
      const message = (err as Error).message.replace(/provider URL/g, 'MCP server URL');
      throw new AppError('bad_request', 'mcp_url_refused', message, [{ path: 'body/url', message }]);
    }
  }

  /**
   * The one place a server change is written to the audit log, in the change's transaction: its
   * name, whether it is on and the URL's origin (a path or query may hold a credential); never the headers.
   */
  private async audit(tx: Executor, caller: Principal, action: AuditAction, target: McpServerRow): Promise<void> {
    let origin = '';
    try {
      origin = new URL(target.url).origin;
    } catch {
      // stored URLs are checked on the way in; nothing to show otherwise
    }
    await recordAudit(tx, {
      action,
      actor: caller,
      target: { type: 'mcp_server', id: target.id },
      details: { name: target.name, enabled: target.enabled, origin },
    });
  }
}

/** An MCP input schema as a function's parameters: an object schema, without the `$schema` key some providers refuse. */
function parametersOf(schema: Record<string, unknown>): Record<string, unknown> {
  const { $schema: _drop, ...rest } = schema ?? {};
  return { ...rest, type: 'object' };
}

/** The model's arguments (JSON text of an object, or empty for none). */
function parseArguments(text: string): Record<string, unknown> {
  if (!text.trim()) return {};
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw new Error('The arguments are not valid JSON');
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new Error('The arguments must be a JSON object');
  return v as Record<string, unknown>;
}

/** Why a server could not be reached, for its owner (no headers, no stack). */
export function describe(err: unknown): string {
  const e = err as { name?: string; message?: string; code?: string };
  if (e?.name === 'ProviderUrlError') return (e.message ?? '').replace(/provider URL/g, 'MCP server URL');
  const msg = (e?.message ?? String(err)).slice(0, 500);
  return msg || 'The server could not be reached';
}
