/**
 * A tool step's added latency: the same chat turn (`POST /api/v1/chat/{ws}/completions`, plain
 * answer) in a workspace without tools, and in one whose MCP server's tool the model calls once
 * (so two provider calls and one MCP call), against the stand-in provider and a small MCP server
 * on loopback whose tool answers at once. The reference is the bare MCP call from the official
 * SDK's client over the same transport. In process (buildApp, inject, one at a time, PGlite).
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { ADMIN_KEY } from '../test/helpers/app.js';
import { startMcpTestServer } from '../test/support/mcp-test-server.js';
import { startStandInProvider } from '../test/support/standin-provider.js';
import { renderSection, type Row, type Section } from './lib/report.js';
import { round, summarize } from './lib/stats.js';
import { now, since, stopwatch } from './lib/timer.js';

const RUNS = 200;
const WARMUP = 20;

async function timed(n: number, warmup: number, shot: () => Promise<void>): Promise<number[]> {
  const ms: number[] = [];
  for (let i = 0; i < warmup + n; i++) {
    const t0 = now();
    await shot();
    if (i >= warmup) ms.push(since(t0));
  }
  return ms;
}

export async function benchToolStep(): Promise<Section> {
  const sw = stopwatch();
  const dataDir = mkdtempSync(path.join(tmpdir(), 'atrium-bench-'));
  const [standIn, tools] = await Promise.all([startStandInProvider(), startMcpTestServer()]);
  const config = {
    ...loadConfig({ DATA_DIR: dataDir, ADMIN_API_KEY: ADMIN_KEY, SECRET_KEY: 'test-secret-key-0123456789', LOG_LEVEL: 'silent' }),
    databaseUrl: 'memory://',
  };
  const app = await buildApp(config, { logger: false });
  const client = new Client({ name: 'bench', version: '1' });
  try {
    const post = async (url: string, payload: object, key: string) => {
      const res = await app.app.inject({ method: 'POST', url, payload, headers: { authorization: `Bearer ${key}` } });
      if (res.statusCode >= 300) throw new Error(`${url}: ${res.statusCode} ${res.body}`);
      return res.json();
    };
    const team = await post(
      '/api/v1/teams',
      { name: `bench-${randomUUID().slice(0, 8)}`, ownerName: 'O', ownerEmail: `o-${randomUUID()}@example.com` },
      ADMIN_KEY,
    );
    const key = team.apiKey as string;
    const model = await post(
      '/api/v1/models',
      { name: 'stand-in', apiBase: 'OPENAI', url: standIn.openaiBaseUrl, baseModel: 'gpt-test', apiKey: 'sk-test', contextWindow: 8192 },
      key,
    );
    const server = await post('/api/v1/mcp-servers', { name: 'tools', url: tools.url }, key);
    const plain = await post('/api/v1/workspaces', { name: 'plain', modelIds: [model.id] }, key);
    const withTools = await post('/api/v1/workspaces', { name: 'tools', modelIds: [model.id], mcpServerIds: [server.id], allowedTools: ['wait'] }, key);
    standIn.set({ toolCalls: [{ name: 'wait', arguments: { ms: 0 } }] });
    const turn = (wsId: string) => async () => {
      const a = await post(`/api/v1/chat/${wsId}/completions`, { prompt: 'What does the tool say?' }, key);
      if (!a.message.content) throw new Error('empty answer');
    };
    await client.connect(new StreamableHTTPClientTransport(new URL(tools.url)));
    const bare = async () => {
      await client.callTool({ name: 'wait', arguments: { ms: 0 } });
    };
    const plainMs = summarize(await timed(RUNS, WARMUP, turn(plain.id)));
    const toolMs = summarize(await timed(RUNS, WARMUP, turn(withTools.id)));
    const bareMs = summarize(await timed(RUNS, WARMUP, bare));
    const rows: Row[] = [
      { what: 'turn, no tools (1 provider call)', n: plainMs.n, 'p50 ms': round(plainMs.p50, 2), 'p90 ms': round(plainMs.p90, 2) },
      { what: 'turn with one tool step (2 provider calls, 1 MCP call)', n: toolMs.n, 'p50 ms': round(toolMs.p50, 2), 'p90 ms': round(toolMs.p90, 2) },
      { what: 'bare MCP tools/call (SDK client, reference)', n: bareMs.n, 'p50 ms': round(bareMs.p50, 2), 'p90 ms': round(bareMs.p90, 2) },
      { what: 'added by the tool step (p50 difference)', n: '', 'p50 ms': round(toolMs.p50 - plainMs.p50, 2), 'p90 ms': '' },
    ];
    return {
      name: 'Tool step',
      method: `In process: buildApp on PGlite, the stand-in provider and a small MCP server (official SDK, streamable HTTP) on loopback. The same plain chat turn in a workspace without tools and in one whose server's \`wait {ms: 0}\` tool the model calls once (the stand-in asks for it, then answers from the result); ${RUNS} turns each after ${WARMUP} warm-up turns, one at a time. Reference: the bare \`tools/call\` from the SDK's client on its own connection.`,
      tables: [{ rows }],
      notes: [
        'A tool step costs a second provider call and an MCP round trip; what remains of the difference is the loop itself (refitting the prompt with the result, the events) and the larger statement 2 (the calls stored on the answer).',
      ],
      seconds: sw.elapsedMs() / 1000,
    };
  } finally {
    await client.close().catch(() => undefined);
    await app.app.close();
    await standIn.close();
    await tools.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.stdout.write(`${renderSection(await benchToolStep())}\n`);
}
