/**
 * Chat turns with a workspace's MCP tools, against real MCP servers on loopback (the reference
 * server from npm, and a small one of our own for slow, huge and failing tools), for models of
 * each protocol through the stand-in: the model's calls run, their results go back in the
 * protocol's own form, the stream shows them, the thread, the prompt log and the ledger keep them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countTokens } from '../../src/ingest/tokens.js';
import createClient from 'openapi-fetch';
import { expectStatus, type paths, type Schemas } from '../helpers/api.js';
import { newTeam, startTestApp, type TestApp } from '../helpers/app.js';
import { createModel, createWorkspace } from '../helpers/factories.js';
import { parseSse } from '../helpers/sse.js';
import { startMcpTestServer, startServerEverything, type McpTestServer } from '../support/mcp-test-server.js';
import { useStandIn, type StandInKind } from '../support/use-standin.js';
import { logsOf } from './v1-helpers.js';

const s = useStandIn();
let t: TestApp;
let baseUrl: string;
let everything: { url: string; close(): Promise<void> };
let tools: McpTestServer;

beforeAll(async () => {
  [t, everything, tools] = await Promise.all([startTestApp({ mcpCallTimeoutMs: 1_000 }), startServerEverything(), startMcpTestServer()]);
  baseUrl = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await t?.close();
  await everything?.close();
  await tools?.close();
});

type V1Chat = paths['/v1/chat/completions']['post']['requestBody']['content']['application/json'];

const KINDS: StandInKind[] = ['OPENAI', 'ANTHROPIC', 'GOOGLE'];

async function setup(kind: StandInKind, server: string, ws: Record<string, unknown> = {}, model: Record<string, unknown> = {}) {
  const team = await newTeam(t);
  const m = await createModel(t, team.ownerKey, { ...s.modelBody(kind), contextWindow: 65_536, ...model });
  const server$ = expectStatus(await t.api(team.ownerKey).POST('/api/v1/mcp-servers', { body: { name: 'tools', url: server } }), 200);
  const w = await createWorkspace(t, team.ownerKey, { modelIds: [m.id], mcpServerIds: [server$.id], ...ws });
  tools.reset();
  return { team, model: m, ws: w, serverId: server$.id };
}

type Completion = paths['/api/v1/chat/{workspaceId}/completions']['post']['requestBody']['content']['application/json'];
const wsAt = (workspaceId: string) => ({ params: { path: { workspaceId } } });

const complete = (key: string, wsId: string, body: Completion) => t.api(key).POST('/api/v1/chat/{workspaceId}/completions', { ...wsAt(wsId), body });

async function stream(key: string, wsId: string, body: Completion) {
  const res = await t.api(key).POST('/api/v1/chat/{workspaceId}/completions/stream', { ...wsAt(wsId), body, parseAs: 'text' });
  expect(res.response.status).toBe(200);
  return parseSse(res.data as unknown as string);
}

const chatRequests = () => s.standIn.requests.filter((r) => r.method === 'POST' && !r.path.includes('embed') && r.usage);

/** The names of the tools a provider request offered, whatever its protocol. */
function offeredNames(body: Record<string, unknown>): string[] {
  const tl = (body.tools ?? []) as Array<Record<string, unknown>>;
  return tl.flatMap((x) =>
    x.functionDeclarations ? (x.functionDeclarations as Array<{ name: string }>).map((d) => d.name) : [((x.function as { name?: string }) ?? x).name as string],
  );
}

async function thread(key: string, workspaceId: string, threadId: string) {
  return expectStatus(await t.api(key).GET('/api/v1/chat/{workspaceId}/history/{threadId}', { params: { path: { workspaceId, threadId } } }), 200);
}

describe.each(KINDS)('a turn with MCP tools (%s)', (kind) => {
  it('streams the call and its result, answers from it, and keeps both in the thread and the prompt log', async () => {
    const { team, ws } = await setup(kind, everything.url, { allowedTools: ['echo'] });
    s.standIn.set({ toolCalls: [{ name: 'echo', arguments: { message: 'hi there' } }] });
    const events = await stream(team.ownerKey, ws.id, { prompt: 'Say hi through the echo tool' });
    const names = events.map((e) => e.event);
    expect(names[0]).toBe('start');
    expect(names.at(-1)).toBe('done');
    const call = events.find((e) => e.event === 'tool_call')!.data;
    const result = events.find((e) => e.event === 'tool_result')!.data;
    expect(call).toEqual({ type: 'tool_call', id: expect.any(String), name: 'echo', arguments: '{"message":"hi there"}' });
    expect(result).toEqual({ type: 'tool_result', id: call.id, ok: true, content: 'Echo: hi there' });
    expect(names.indexOf('tool_call')).toBeLessThan(names.indexOf('tool_result'));
    const answer = events
      .filter((e) => e.event === 'delta')
      .map((e) => e.data.content)
      .join('');
    expect(answer).toContain('Echo: hi there');

    // Two provider calls: the first offered only the allowed tool; the second carried the result in the protocol's form.
    const reqs = chatRequests();
    expect(reqs).toHaveLength(2);
    expect(offeredNames(reqs[0]!.body)).toEqual(['echo']);
    const sent = JSON.stringify(reqs[1]!.body);
    expect(sent).toContain('Echo: hi there');
    if (kind === 'OPENAI') expect(reqs[1]!.body.messages.at(-1)).toMatchObject({ role: 'tool', tool_call_id: call.id, content: 'Echo: hi there' });
    if (kind === 'ANTHROPIC') expect(reqs[1]!.body.messages.at(-1).content[0]).toMatchObject({ type: 'tool_result', tool_use_id: call.id });
    if (kind === 'GOOGLE') expect(reqs[1]!.body.contents.at(-1).parts[0].functionResponse).toMatchObject({ name: 'echo' });

    const start = events[0]!.data as { threadId: string };
    const stored = (await thread(team.ownerKey, ws.id, start.threadId)).messages.at(-1)!;
    expect(stored.role).toBe('assistant');
    expect(stored.toolCalls).toEqual([
      { id: call.id, name: 'echo', arguments: '{"message":"hi there"}', ok: true, content: 'Echo: hi there', durationMs: expect.any(Number), step: 1 },
    ]);
    const [log] = await logsOf(t, team.ownerKey);
    expect(log!.status).toBe('ok');
    expect(log!.response).toContain(`[tool call ${call.id as string}] echo({"message":"hi there"})`);
    expect(log!.response).toContain(`[tool result ${call.id as string}] Echo: hi there`);
  });

  it('bills every step: the answer’s usage, the log and the ledger are the sum of both provider calls', async () => {
    const { team, ws } = await setup(kind, everything.url, { allowedTools: ['get-sum'] });
    s.standIn.set({ toolCalls: [{ name: 'get-sum', arguments: { a: 2, b: 3 } }] });
    const res = expectStatus(await complete(team.ownerKey, ws.id, { prompt: 'What is 2 + 3?' }), 200);
    expect(res.message.content).toContain('The sum of 2 and 3 is 5.');
    const reqs = chatRequests();
    expect(reqs).toHaveLength(2);
    const prompt = reqs.reduce((n, r) => n + r.usage!.promptTokens, 0);
    const completion = reqs.reduce((n, r) => n + r.usage!.completionTokens, 0);
    expect(res.usage).toEqual({ promptTokens: prompt, completionTokens: completion, totalTokens: prompt + completion });
    const [log] = await logsOf(t, team.ownerKey);
    expect([log!.promptTokens, log!.completionTokens]).toEqual([prompt, completion]);
    const usage = expectStatus(await t.api(team.ownerKey).GET('/api/v1/usage', { params: { query: { groupBy: 'user' } } }), 200);
    expect(usage.reduce((n, r) => n + r.promptTokens, 0)).toBe(prompt);
  });
});

describe('tool failures and limits', () => {
  it('a failing tool goes back to the model as an error result, and the turn answers', async () => {
    const { team, ws } = await setup('OPENAI', tools.url);
    s.standIn.set({ toolCalls: [{ name: 'boom', arguments: {} }] });
    const events = await stream(team.ownerKey, ws.id, { prompt: 'Try the boom tool' });
    const result = events.find((e) => e.event === 'tool_result')!.data;
    expect(result).toMatchObject({ ok: false, content: expect.stringContaining('always fails') });
    expect(events.at(-1)!.event).toBe('done');
    const last = chatRequests().at(-1)!.body.messages.at(-1);
    expect(last).toMatchObject({ role: 'tool', content: expect.stringMatching(/^Error: .*always fails/) });
  });

  it('a tool that does not answer in time is cancelled and reported to the model as timed out', async () => {
    const { team, ws } = await setup('OPENAI', tools.url);
    s.standIn.set({ toolCalls: [{ name: 'wait', arguments: { ms: 15_000 } }] });
    const res = expectStatus(await complete(team.ownerKey, ws.id, { prompt: 'Wait a long time' }), 200);
    await tools.cancelledReaches(1);
    const last = chatRequests().at(-1)!.body.messages.at(-1);
    expect(last).toMatchObject({ role: 'tool', content: 'Error: The tool did not answer within 1 s' });
    const stored = (await thread(team.ownerKey, ws.id, res.threadId)).messages.at(-1)!;
    expect(stored.toolCalls![0]).toMatchObject({ name: 'wait', ok: false });
  });

  it('an oversized result is cut to 16,000 tokens before the model sees it', async () => {
    const { team, ws } = await setup('OPENAI', tools.url);
    s.standIn.set({ toolCalls: [{ name: 'big', arguments: { words: 40_000 } }] });
    const events = await stream(team.ownerKey, ws.id, { prompt: 'Get the big text' });
    const result = events.find((e) => e.event === 'tool_result')!.data as { content: string; ok: boolean };
    expect(result.ok).toBe(true);
    expect(result.content).toMatch(/\[cut: the result was longer than 16,000 tokens\]$/);
    expect(countTokens(result.content)).toBeLessThanOrEqual(16_000 + 20);
    expect(countTokens(result.content)).toBeGreaterThan(15_000);
    const sent = chatRequests().at(-1)!.body.messages.at(-1).content as string;
    expect(sent).toBe(result.content);
  });

  it('calls the model makes at once run at once', async () => {
    const { team, ws } = await setup('ANTHROPIC', tools.url);
    s.standIn.set({
      toolCalls: [
        { name: 'wait', arguments: { ms: 400 } },
        { name: 'wait', arguments: { ms: 400 } },
        { name: 'wait', arguments: { ms: 400 } },
      ],
    });
    const events = await stream(team.ownerKey, ws.id, { prompt: 'Wait three times' });
    expect(events.filter((e) => e.event === 'tool_result').map((e) => e.data.ok)).toEqual([true, true, true]);
    expect(tools.calls).toHaveLength(3);
    expect(tools.maxInFlight).toBe(3);
  });

  it('stops at 8 provider calls: 7 rounds of tools, then the model is told to call none', async () => {
    const { team, ws } = await setup('GOOGLE', tools.url);
    s.standIn.set({ toolCalls: [{ name: 'wait', arguments: { ms: 1 } }], toolCallsAfterResults: true });
    const res = expectStatus(await complete(team.ownerKey, ws.id, { prompt: 'Loop forever' }), 200);
    const reqs = chatRequests();
    expect(reqs).toHaveLength(8);
    expect(tools.calls).toHaveLength(7);
    expect(reqs[6]!.body.toolConfig?.functionCallingConfig?.mode).not.toBe('NONE');
    expect(reqs[7]!.body.toolConfig.functionCallingConfig.mode).toBe('NONE');
    const stored = (await thread(team.ownerKey, ws.id, res.threadId)).messages.at(-1)!;
    expect(stored.toolCalls!.map((c) => c.step)).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });

  it('a budget stops a runaway loop before it is overspent', async () => {
    const { team, ws } = await setup('OPENAI', tools.url, {}, { chatCredits: 1000 });
    s.standIn.set({ toolCalls: [{ name: 'wait', arguments: { ms: 1 } }], toolCallsAfterResults: true });
    const api = t.api(team.ownerKey);
    expectStatus(await api.POST('/api/v1/budgets', { body: { scope: 'team', scopeId: team.teamId, period: 'day', credits: 20_000 } }), 201);
    const res = expectStatus(await complete(team.ownerKey, ws.id, { prompt: 'Loop forever', maxTokens: 50 }), 200);
    expect(res.finishReason).toBe('length');
    expect(chatRequests().length).toBeLessThan(8);
    expect(chatRequests().length).toBeGreaterThanOrEqual(2);
    const budgets = expectStatus(await api.GET('/api/v1/budgets'), 200);
    expect(budgets[0]!.spent).toBeGreaterThan(0);
    expect(budgets[0]!.spent).toBeLessThanOrEqual(budgets[0]!.credits!);
  });

  it('the client going away cancels the running tool call and ends the log interrupted', async () => {
    const { team, ws } = await setup('OPENAI', tools.url, {}, {});
    s.standIn.set({ toolCalls: [{ name: 'wait', arguments: { ms: 900 } }] });
    const abort = new AbortController();
    // over a real socket, so that the client can hang up while the tool runs
    const overSocket = createClient<paths>({ baseUrl, headers: { authorization: `Bearer ${team.ownerKey}` } });
    const res = await overSocket.POST('/api/v1/chat/{workspaceId}/completions/stream', {
      ...wsAt(ws.id),
      body: { prompt: 'Wait, then I leave' },
      parseAs: 'stream',
      signal: abort.signal,
    });
    expect(res.response.status).toBe(200);
    const reader = res.data!.getReader();
    let seen = '';
    while (!seen.includes('event: tool_call')) seen += new TextDecoder().decode((await reader.read()).value);
    abort.abort();
    await tools.cancelledReaches(1);
    for (let i = 0; i < 100; i++) {
      const [log] = await logsOf(t, team.ownerKey);
      if (log!.status !== 'pending') break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const [log] = await logsOf(t, team.ownerKey);
    expect(log!.status).toBe('interrupted');
    expect(chatRequests()).toHaveLength(1);
  });
});

describe('which turns are offered the tools', () => {
  it('a workspace whose server cannot be reached answers without tools', async () => {
    const { team, ws } = await setup('OPENAI', 'http://127.0.0.1:9/mcp');
    s.standIn.set({ toolCalls: [{ name: 'echo', arguments: { message: 'x' } }] });
    const res = expectStatus(await complete(team.ownerKey, ws.id, { prompt: 'hello' }), 200);
    expect(res.message.content).toBe('Echo: hello');
    expect(chatRequests()[0]!.body.tools).toBeUndefined();
  });

  it('a disabled server’s tools are not offered', async () => {
    const { team, ws, serverId } = await setup('OPENAI', everything.url);
    expectStatus(await t.api(team.ownerKey).PATCH('/api/v1/mcp-servers/{serverId}', { params: { path: { serverId } }, body: { enabled: false } }), 200);
    const res = await complete(team.ownerKey, ws.id, { prompt: 'hello' });
    expect(res.response.status).toBe(200);
    expect(chatRequests()[0]!.body.tools).toBeUndefined();
  });

  it('/v1 without tools of its own gets the workspace’s; with its own, only those', async () => {
    const { team, ws } = await setup('OPENAI', everything.url, { allowedTools: ['echo'] });
    s.standIn.set({ toolCalls: [{ name: 'echo', arguments: { message: 'via v1' } }] });
    const api = t.api(team.ownerKey);
    const v1 = async (body: Pick<V1Chat, 'messages' | 'tools'>) =>
      expectStatus(await api.POST('/v1/chat/completions', { body: { model: `workspace/${ws.id}`, ...body } }), 200) as Schemas['OpenAIChatCompletion'];
    const res = await v1({ messages: [{ role: 'user', content: 'echo please' }] });
    expect(res.choices[0]).toMatchObject({ finish_reason: 'stop', message: { content: expect.stringContaining('Echo: via v1') } });
    expect(res.choices[0]!.message.tool_calls).toBeUndefined();
    // Streamed: OpenAI's chunks carry the answer the tool led to, never the workspace's calls.
    s.standIn.reset();
    s.standIn.set({ toolCalls: [{ name: 'echo', arguments: { message: 'streamed' } }] });
    const streamed = await api.POST('/v1/chat/completions', {
      body: { model: `workspace/${ws.id}`, stream: true, messages: [{ role: 'user', content: 'echo please' }] },
      parseAs: 'text',
    });
    expect(streamed.response.status).toBe(200);
    const chunks = (streamed.data as unknown as string)
      .split('\n\n')
      .filter((b) => b.startsWith('data: {'))
      .map((b) => JSON.parse(b.slice(6)) as { choices: Array<{ delta: { content?: string; tool_calls?: unknown }; finish_reason: string | null }> });
    expect(chunks.flatMap((c) => c.choices).some((c) => c.delta.tool_calls)).toBe(false);
    expect(chunks.flatMap((c) => c.choices.map((x) => x.delta.content ?? '')).join('')).toContain('Echo: streamed');
    expect(chunks.flatMap((c) => c.choices).at(-1)!.finish_reason).toBe('stop');
    s.standIn.reset();
    s.standIn.set({ toolCalls: [{ name: 'mine', arguments: {} }] });
    const own = await v1({
      messages: [{ role: 'user', content: 'use mine' }],
      tools: [{ type: 'function', function: { name: 'mine', parameters: { type: 'object' } } }],
    });
    expect(own.choices[0]!.finish_reason).toBe('tool_calls');
    expect(offeredNames(chatRequests()[0]!.body)).toEqual(['mine']);
  });
});
