/**
 * A tiny MCP server over streamable HTTP on loopback, built with the official SDK, for what the
 * reference server cannot show: a tool that waits (timeouts, parallel calls, a cancelled call),
 * one with a huge result, one that throws. It records what it saw:
 *
 *   const m = await startMcpTestServer();   // m.url → http://127.0.0.1:<port>/mcp
 *   m.calls          // every tools/call: name, arguments, the headers of its request
 *   m.maxInFlight    // the most calls running at once
 *   m.cancelled      // calls whose request the client cancelled (the handler's signal aborted)
 *
 * Tools: `wait {ms}` answers `waited <ms>` after ms (or when cancelled); `big {words}` answers that
 * many words; `boom` fails (a thrown error: the SDK answers it as an error result).
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

export interface McpTestServer {
  url: string;
  calls: Array<{ name: string; arguments: Record<string, unknown>; headers: IncomingMessage['headers'] }>;
  maxInFlight: number;
  cancelled: number;
  /** the headers of the latest HTTP request */
  lastHeaders: IncomingMessage['headers'];
  /** resolves when `n` calls were cancelled */
  cancelledReaches(n: number): Promise<void>;
  reset(): void;
  close(): Promise<void>;
}

const TOOLS = [
  { name: 'wait', description: 'Waits a number of milliseconds', inputSchema: { type: 'object', properties: { ms: { type: 'number' } }, required: ['ms'] } },
  { name: 'big', description: 'Answers many words', inputSchema: { type: 'object', properties: { words: { type: 'number' } } } },
  { name: 'boom', description: 'Always fails', inputSchema: { type: 'object', properties: {} } },
];

export async function startMcpTestServer(): Promise<McpTestServer> {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  let inFlight = 0;
  const waiters: Array<{ n: number; resolve: () => void }> = [];
  let currentHeaders: IncomingMessage['headers'] = {};
  const state: McpTestServer = {
    url: '',
    calls: [],
    maxInFlight: 0,
    cancelled: 0,
    lastHeaders: {},
    cancelledReaches: (n) =>
      new Promise((resolve) => {
        if (state.cancelled >= n) resolve();
        else waiters.push({ n, resolve });
      }),
    reset() {
      state.calls = [];
      state.maxInFlight = 0;
      state.cancelled = 0;
    },
    close: async () => {
      for (const t of transports.values()) await t.close().catch(() => undefined);
      http.closeAllConnections();
      await new Promise<void>((r) => http.close(() => r()));
    },
  };

  const newServer = (): Server => {
    const server = new Server({ name: 'atrium-test-tools', version: '1.0.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: TOOLS }));
    server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
      const args = (req.params.arguments ?? {}) as Record<string, unknown>;
      state.calls.push({ name: req.params.name, arguments: args, headers: currentHeaders });
      inFlight++;
      state.maxInFlight = Math.max(state.maxInFlight, inFlight);
      try {
        switch (req.params.name) {
          case 'wait': {
            const ms = Number(args.ms ?? 0);
            await new Promise<void>((resolve) => {
              const t = setTimeout(resolve, ms);
              extra.signal.addEventListener('abort', () => {
                clearTimeout(t);
                state.cancelled++;
                for (const w of waiters.filter((x) => state.cancelled >= x.n)) w.resolve();
                resolve();
              });
            });
            return { content: [{ type: 'text', text: `waited ${ms}` }] };
          }
          case 'big':
            return { content: [{ type: 'text', text: Array.from({ length: Number(args.words ?? 50_000) }, (_, i) => `word${i}`).join(' ') }] };
          case 'boom':
            throw new Error('the boom tool always fails');
          default:
            return { content: [{ type: 'text', text: `no tool ${req.params.name}` }], isError: true };
        }
      } finally {
        inFlight--;
      }
    });
    return server;
  };

  const http = createServer(async (req, res) => {
    if (!req.url?.startsWith('/mcp')) {
      res.writeHead(404).end();
      return;
    }
    currentHeaders = req.headers;
    state.lastHeaders = req.headers;
    const sid = req.headers['mcp-session-id'];
    let transport = typeof sid === 'string' ? transports.get(sid) : undefined;
    if (!transport) {
      if (req.method !== 'POST' || sid) {
        res.writeHead(404).end();
        return;
      }
      const t: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => void transports.set(id, t),
      });
      t.onclose = () => {
        if (t.sessionId) transports.delete(t.sessionId);
      };
      await newServer().connect(t);
      transport = t;
    }
    await transport.handleRequest(req, res);
  });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', () => r()));
  state.url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
  return state;
}

/**
 * The reference MCP server from npm (`@modelcontextprotocol/server-everything`) in streamable
 * HTTP mode, as a child process on a free loopback port.
 */
export async function startServerEverything(): Promise<{ url: string; close(): Promise<void> }> {
  const { spawn } = await import('node:child_process');
  const { createRequire } = await import('node:module');
  const path = await import('node:path');
  const port = await freePort();
  const entry = path.join(path.dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/package.json')), 'dist/index.js');
  const child = spawn(process.execPath, [entry, 'streamableHttp'], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'pipe'] });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('server-everything did not start')), 20_000);
    child.stderr!.on('data', (d: Buffer) => {
      if (d.toString().includes('listening')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.on('exit', (code) => reject(new Error(`server-everything exited with ${code}`)));
  });
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    close: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.on('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const port = (s.address() as AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}
