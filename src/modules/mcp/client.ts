import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { TtlCache } from '../../cache.js';
import { assertProviderUrlAllowed, type ProviderUrlPolicy } from '../../providers/url-guard.js';

/**
 * The MCP side of Atrium: connections to a team's MCP servers over streamable HTTP, through the
 * official SDK, and the tools each offers. No database and no HTTP routes here: the service hands
 * in an endpoint (URL, headers already opened) and gets tools and results back.
 *
 * One connection per server is kept open and shared by every turn that calls it (the SDK runs
 * concurrent requests over one session), for at most CONNECTION_TTL_MS; a connection that fails
 * is dropped and the next call opens a new one. The URL guard runs before every new connection.
 * A server's tool list is cached for TOOLS_TTL_MS, keyed by the server's `updated` time, so a
 * change to the server (on any node) is a new key and lists its tools again.
 */

export interface McpEndpoint {
  id: string;
  url: string;
  headers: Record<string, string>;
  /** changes whenever the server's row changes (its `updated` time): cached connections and tools of another version are not used */
  version: string;
}

/** A tool as the server lists it. */
export interface McpTool {
  name: string;
  description: string;
  /** JSON Schema of its arguments object */
  inputSchema: Record<string, unknown>;
}

export interface McpCallResult {
  ok: boolean;
  content: string;
}

/** How long a connection is kept (then closed and opened again, the URL checked again). */
const CONNECTION_TTL_MS = 5 * 60_000;
/** How long a server's tool list is kept. */
const TOOLS_TTL_MS = 5 * 60_000;
/** A server that could not be listed is not asked again for this long (turns would each wait for it). */
const FAILURE_TTL_MS = 30_000;
/** The bound of the caches: at most this many servers' connections and tool lists. */
const MAX_SERVERS = 500;
/** Connecting and listing tools must not hold a turn (or a test) for long. */
export const LIST_TIMEOUT_MS = 10_000;

interface Connection {
  version: string;
  client: Promise<Client>;
  until: number;
}

export class McpClients {
  private readonly connections = new Map<string, Connection>();
  private readonly tools = new TtlCache<string, McpTool[]>(TOOLS_TTL_MS, MAX_SERVERS);
  private readonly failures = new TtlCache<string, unknown>(FAILURE_TTL_MS, MAX_SERVERS);

  constructor(private readonly urlPolicy: ProviderUrlPolicy) {}

  /**
   * The server's tools (cached); throws when it cannot be reached or listed (and, for
   * FAILURE_TTL_MS, at once). `fresh`: ask the server, whatever is cached.
   */
  async listTools(ep: McpEndpoint, opts: { fresh?: boolean; signal?: AbortSignal } = {}): Promise<McpTool[]> {
    const key = `${ep.id}@${ep.version}`;
    if (!opts.fresh) {
      const hit = this.tools.get(key);
      if (hit) return hit;
      const failed = this.failures.get(key);
      if (failed !== undefined) throw failed;
    }
    const listed = await this.list(ep, opts.signal).catch((err: unknown) => {
      this.failures.set(key, err);
      throw err;
    });
    this.failures.delete(key);
    this.tools.set(key, listed);
    return listed;
  }

  private list(ep: McpEndpoint, signal: AbortSignal | undefined): Promise<McpTool[]> {
    return this.withClient(ep, async (c) => {
      const out: McpTool[] = [];
      let cursor: string | undefined;
      do {
        const page = await c.listTools(cursor ? { cursor } : undefined, { timeout: LIST_TIMEOUT_MS, ...(signal ? { signal } : {}) });
        for (const t of page.tools)
          out.push({ name: t.name, description: t.description ?? t.title ?? '', inputSchema: t.inputSchema as Record<string, unknown> });
        cursor = page.nextCursor;
      } while (cursor && out.length < 1000);
      return out;
    });
  }

  /**
   * Calls one tool. A result the server marks as an error is `ok: false` with its text; a failure
   * to reach the server, a timeout or an abort is thrown (the caller reports it to the model).
   */
  async callTool(ep: McpEndpoint, name: string, args: Record<string, unknown>, signal: AbortSignal, timeoutMs: number): Promise<McpCallResult> {
    return this.withClient(ep, async (c) => {
      const r = await c.callTool({ name, arguments: args }, undefined, { signal, timeout: timeoutMs });
      return { ok: r.isError !== true, content: resultText(r as ToolResult) };
    });
  }

  /** Forget the server's connection and tools (it changed or was deleted on this node). */
  forget(serverId: string): void {
    this.tools.deleteWhere((_v, k) => k.startsWith(`${serverId}@`));
    this.failures.deleteWhere((_v, k) => k.startsWith(`${serverId}@`));
    const c = this.connections.get(serverId);
    this.connections.delete(serverId);
    if (c) void c.client.then((x) => x.close()).catch(() => undefined);
  }

  /** Closes every connection (the app is closing). */
  async close(): Promise<void> {
    const all = [...this.connections.values()];
    this.connections.clear();
    await Promise.all(all.map((c) => c.client.then((x) => x.close()).catch(() => undefined)));
  }

  /**
   * Runs `fn` on the server's open connection (opening one when there is none, or it is old or
   * of another version). A failure that is not the caller's abort or the request's timeout drops
   * the connection, so the next call reconnects.
   */
  private async withClient<T>(ep: McpEndpoint, fn: (c: Client) => Promise<T>): Promise<T> {
    const client = await this.connection(ep);
    try {
      return await fn(client);
    } catch (err) {
      if (!isRequestLocal(err) && this.connections.get(ep.id)?.version === ep.version) this.forget(ep.id);
      throw err;
    }
  }

  private connection(ep: McpEndpoint): Promise<Client> {
    const now = Date.now();
    const open = this.connections.get(ep.id);
    if (open && open.version === ep.version && open.until > now) return open.client;
    if (open) this.forget(ep.id);
    if (this.connections.size >= MAX_SERVERS) {
      const oldest = this.connections.keys().next().value;
      if (oldest !== undefined) this.forget(oldest);
    }
    const client = connect(ep, this.urlPolicy);
    this.connections.set(ep.id, { version: ep.version, client, until: now + CONNECTION_TTL_MS });
    client.catch(() => {
      if (this.connections.get(ep.id)?.client === client) this.connections.delete(ep.id);
    });
    return client;
  }
}

/** Opens a connection: the URL guard first (as for model URLs), then MCP's initialize handshake. */
async function connect(ep: McpEndpoint, policy: ProviderUrlPolicy): Promise<Client> {
  await assertProviderUrlAllowed(ep.url, policy);
  const transport = new StreamableHTTPClientTransport(new URL(ep.url), {
    requestInit: { headers: ep.headers, redirect: 'error' },
    reconnectionOptions: { maxReconnectionDelay: 30_000, initialReconnectionDelay: 1_000, reconnectionDelayGrowFactor: 1.5, maxRetries: 0 },
  });
  const client = new Client({ name: 'atrium', version: '1' });
  await client.connect(transport, { timeout: LIST_TIMEOUT_MS });
  return client;
}

/** The caller's abort or this request's timeout: the connection itself is fine. */
function isRequestLocal(err: unknown): boolean {
  const e = err as { name?: string; code?: number };
  return e?.name === 'AbortError' || e?.name === 'TimeoutError' || e?.code === -32001;
}

interface ToolResult {
  content?: Array<{ type: string; text?: string; mimeType?: string; uri?: string; resource?: { uri: string; text?: string; mimeType?: string } }>;
  structuredContent?: unknown;
  isError?: boolean;
}

/** A tool result as text for the model: its text parts; other parts named by kind; structured content as JSON when there is no text. */
export function resultText(r: ToolResult): string {
  const parts = (r.content ?? []).map((p) => {
    if (p.type === 'text') return p.text ?? '';
    if (p.type === 'resource' && p.resource) return p.resource.text ?? `[resource ${p.resource.uri}]`;
    if (p.type === 'resource_link') return `[resource ${p.uri ?? ''}]`;
    return `[${p.type}${p.mimeType ? ` ${p.mimeType}` : ''}]`;
  });
  if (parts.every((p) => !p) && r.structuredContent !== undefined) return JSON.stringify(r.structuredContent);
  return parts.join('\n');
}
