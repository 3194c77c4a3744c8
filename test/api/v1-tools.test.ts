/**
 * Tools on /v1/chat/completions, for models of each protocol: real clients (the official `openai`
 * SDK with its streaming helper, the Vercel AI SDK) against the running server; the stand-in
 * answers with calls in its own wire format and records what it received, so each test checks
 * the translated request, the OpenAI-shaped answer and the prompt log.
 */
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateText, jsonSchema, stepCountIs, streamText, tool } from 'ai';
import { countTokens } from '../../src/ingest/tokens.js';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OpenAIChatCompletion, OpenAIChatCompletionChunk } from '../../src/modules/openai-compat/schema.js';
import { expectStatus } from '../helpers/api.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { expectShape } from '../helpers/shape.js';
import { LEAKED_SECRET } from '../support/standin-provider.js';
import { useStandIn, type StandInKind } from '../support/use-standin.js';
import { createWorkspace } from '../helpers/factories.js';
import { createPlus, logsOf, sdk, v1Setup } from './v1-helpers.js';

const s = useStandIn();
let t: TestApp;
let baseUrl: string;

beforeAll(async () => {
  t = await startTestApp();
  baseUrl = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await t.close();
});

type Params = OpenAI.Chat.ChatCompletionCreateParamsNonStreaming;
const WEATHER_PARAMS = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
const TOOLS: OpenAI.Chat.ChatCompletionTool[] = [
  { type: 'function', function: { name: 'get_weather', description: 'Weather of a city', parameters: WEATHER_PARAMS } },
  { type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: {} } } },
];
const CALLS = [
  { name: 'get_weather', arguments: { city: 'Paris' } },
  { name: 'get_time', arguments: {} },
];
const QUESTION: OpenAI.Chat.ChatCompletionMessageParam[] = [
  { role: 'system', content: 'Be brief.' },
  { role: 'user', content: 'Weather and time in Paris?' },
];

async function setupKind(kind: StandInKind, model: Record<string, unknown> = {}) {
  return v1Setup(t, s, {}, { ...s.modelBody(kind), contextWindow: 8192, ...model });
}

/** What the stand-in last received on a chat route. */
const lastSent = () => s.standIn.requests.filter((r) => !r.path.includes('embed')).at(-1)!;

/** The follow-up after the model's calls: the assistant message as the SDK returned it, then one result per call. */
function followUp(message: OpenAI.Chat.ChatCompletionMessage, results: string[]): OpenAI.Chat.ChatCompletionMessageParam[] {
  const calls = message.tool_calls!.filter((c) => c.type === 'function');
  return [
    ...QUESTION,
    { role: 'assistant', content: message.content, tool_calls: calls },
    ...calls.map((c, i) => ({ role: 'tool' as const, tool_call_id: c.id, content: results[i]! })),
  ];
}

/** Checks the request the stand-in got for a follow-up: the call and the results in the protocol's own form. */
function expectTranslatedFollowUp(kind: StandInKind, ids: string[]) {
  const body = lastSent().body;
  if (kind === 'OPENAI') {
    expect(body.messages.slice(-3)).toEqual([
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: ids[0], type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          { id: ids[1], type: 'function', function: { name: 'get_time', arguments: '{}' } },
        ],
      },
      { role: 'tool', tool_call_id: ids[0], content: '{"temp":21}' },
      { role: 'tool', tool_call_id: ids[1], content: 'noon' },
    ]);
  } else if (kind === 'ANTHROPIC') {
    expect(body.messages.slice(-2)).toEqual([
      {
        role: 'assistant',
        content: [
          { type: 'tool_use', id: ids[0], name: 'get_weather', input: { city: 'Paris' } },
          { type: 'tool_use', id: ids[1], name: 'get_time', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: ids[0], content: '{"temp":21}' },
          { type: 'tool_result', tool_use_id: ids[1], content: 'noon' },
        ],
      },
    ]);
  } else {
    expect(body.contents.slice(-2)).toEqual([
      { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } } }, { functionCall: { name: 'get_time', args: {} } }] },
      {
        role: 'user',
        parts: [
          { functionResponse: { name: 'get_weather', response: { temp: 21 } } },
          { functionResponse: { name: 'get_time', response: { output: 'noon' } } },
        ],
      },
    ]);
  }
}

const finalText = (kind: StandInKind) => (kind === 'GOOGLE' ? 'Tool said: {"temp":21} | {"output":"noon"}' : 'Tool said: {"temp":21} | noon');

describe.each<StandInKind>(['OPENAI', 'ANTHROPIC', 'GOOGLE'])('a round trip with a %s model', (kind) => {
  it('plain: tools → tool_calls → the results → the final text; one log row per call, the calls readable in it', async () => {
    const { team, ws } = await setupKind(kind);
    s.standIn.set({ toolCalls: CALLS });
    const client = sdk(baseUrl, team.ownerKey);
    const model = `workspace/${ws.id}`;
    // QUESTION and TOOLS, spelt as the document types them (the SDK's types are narrower)
    const messages = [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Weather and time in Paris?' },
    ];
    expect(messages).toEqual(QUESTION);
    const tools = [
      { type: 'function' as const, function: { name: 'get_weather', description: 'Weather of a city', parameters: WEATHER_PARAMS } },
      { type: 'function' as const, function: { name: 'get_time', parameters: { type: 'object', properties: {} } } },
    ];
    expect(tools).toEqual(TOOLS);
    const res = await t.api(team.ownerKey).POST('/v1/chat/completions', { body: { model, messages, tools, tool_choice: 'auto' } });
    const first = expectShape(OpenAIChatCompletion, expectStatus(res, 200));
    const choice = first.choices[0]!;
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.content).toBeNull();
    const calls = choice.message.tool_calls!;
    expect(calls.map((c) => [c.type, c.function.name, JSON.parse(c.function.arguments)])).toEqual([
      ['function', 'get_weather', { city: 'Paris' }],
      ['function', 'get_time', {}],
    ]);
    const ids = calls.map((c) => c.id);
    expect(new Set(ids).size).toBe(2);
    if (kind === 'GOOGLE') expect(ids.every((id) => /^call_[0-9a-f]{24}$/.test(id))).toBe(true);
    // the tools went out in the protocol's form
    const sent = lastSent().body;
    if (kind === 'GOOGLE') expect(sent.tools[0].functionDeclarations.map((d: { name: string }) => d.name)).toEqual(['get_weather', 'get_time']);
    else if (kind === 'ANTHROPIC') expect(sent.tools[1]).toEqual({ name: 'get_time', input_schema: { type: 'object', properties: {} } });
    else expect(sent.tools).toEqual(TOOLS);

    const done = await client.chat.completions.create({
      model,
      messages: followUp(choice.message as OpenAI.Chat.ChatCompletionMessage, ['{"temp":21}', 'noon']),
      tools: TOOLS,
    } as Params);
    expect(done.choices[0]!.finish_reason).toBe('stop');
    expect(done.choices[0]!.message).toMatchObject({ role: 'assistant', content: finalText(kind) });
    expect(done.choices[0]!.message.tool_calls).toBeUndefined();
    expectTranslatedFollowUp(kind, ids);

    const logs = await logsOf(t, team.ownerKey);
    expect(logs).toHaveLength(2);
    const [second, firstLog] = logs as [(typeof logs)[0], (typeof logs)[0]];
    expect(firstLog).toMatchObject({
      status: 'ok',
      prompt: 'Weather and time in Paris?',
      response: `[tool call ${ids[0]}] get_weather({"city":"Paris"})\n[tool call ${ids[1]}] get_time({})`,
    });
    expect(firstLog.completionTokens).toBeGreaterThan(0);
    expect(second).toMatchObject({ status: 'ok', prompt: `[tool result ${ids[1]}] noon`, response: finalText(kind) });
  });

  it('streamed: OpenAI\u2019s tool-call deltas, read raw and by the SDK\u2019s streaming helper, then the final text streamed', async () => {
    const { team, ws } = await setupKind(kind);
    s.standIn.set({ toolCalls: CALLS });
    const client = sdk(baseUrl, team.ownerKey);
    const model = `workspace/${ws.id}`;

    const raw = await client.chat.completions.create({ model, messages: QUESTION, tools: TOOLS, stream: true });
    const chunks: OpenAI.Chat.ChatCompletionChunk[] = [];
    for await (const c of raw) chunks.push(expectShape(OpenAIChatCompletionChunk, c) as unknown as OpenAI.Chat.ChatCompletionChunk);
    const pieces = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    const firsts = pieces.filter((p) => p.id !== undefined);
    expect(firsts.map((p) => [p.index, p.type, p.function?.name, typeof p.function?.arguments])).toEqual([
      [0, 'function', 'get_weather', 'string'],
      [1, 'function', 'get_time', 'string'],
    ]);
    // later pieces only add arguments, by index
    for (const p of pieces.filter((x) => x.id === undefined)) expect(Object.keys(p).sort()).toEqual(['function', 'index']);
    const args = [0, 1].map((i) =>
      pieces
        .filter((p) => p.index === i)
        .map((p) => p.function?.arguments ?? '')
        .join(''),
    );
    expect(args.map((a) => JSON.parse(a))).toEqual([{ city: 'Paris' }, {}]);
    expect(chunks.at(-1)!.choices[0]!.finish_reason).toBe('tool_calls');

    // the SDK's helper accumulates the deltas into the message
    const runner = client.chat.completions.stream({ model, messages: QUESTION, tools: TOOLS });
    const final = await runner.finalChatCompletion();
    const message = final.choices[0]!.message;
    expect(final.choices[0]!.finish_reason).toBe('tool_calls');
    expect(message.tool_calls!.map((c) => c.type === 'function' && [c.function.name, JSON.parse(c.function.arguments)])).toEqual([
      ['get_weather', { city: 'Paris' }],
      ['get_time', {}],
    ]);
    const ids = message.tool_calls!.map((c) => c.id);

    const answer = client.chat.completions.stream({ model, messages: followUp(message, ['{"temp":21}', 'noon']), tools: TOOLS });
    const texts: string[] = [];
    answer.on('content', (d) => texts.push(d));
    const last = await answer.finalChatCompletion();
    expect(texts.join('')).toBe(finalText(kind));
    expect(texts.length).toBeGreaterThan(1);
    expect(last.choices[0]!.finish_reason).toBe('stop');
    expectTranslatedFollowUp(kind, ids);

    const logs = await logsOf(t, team.ownerKey);
    expect(logs.map((l) => l.status)).toEqual(['ok', 'ok', 'ok']);
    expect(logs[1]!.response).toBe(`[tool call ${ids[0]}] get_weather({"city":"Paris"})\n[tool call ${ids[1]}] get_time({})`);
    expect(logs[0]!.response).toBe(finalText(kind));
  });
});

describe.each<StandInKind>(['OPENAI', 'ANTHROPIC', 'GOOGLE'])('a budgeted call to a %s model that ignores max tokens', (kind) => {
  it('is cut at the output it reserved, tool-call arguments included (finish_reason length), plain and streamed', async () => {
    const { team, ws } = await setupKind(kind, { chatCredits: 1000 });
    const budget = { scope: 'team', scopeId: team.teamId, period: 'month', credits: 1_000_000 } as const;
    expectStatus(await t.api(team.ownerKey).POST('/api/v1/budgets', { body: budget }), 201);
    const long = Array.from({ length: 400 }, (_, i) => `street${i}`).join(' ');
    s.standIn.set({ toolCalls: [{ name: 'get_weather', arguments: { city: long } }], ignoreMaxTokens: true });
    const client = sdk(baseUrl, team.ownerKey);
    const model = `workspace/${ws.id}`;
    const MAX = 24;
    const tokensOf = (calls: Array<{ name: string; arguments: string }>) => calls.reduce((n, c) => n + countTokens(c.name) + countTokens(c.arguments), 0);

    const plain = await client.chat.completions.create({ model, messages: QUESTION, tools: TOOLS, max_tokens: MAX });
    expect(plain.choices[0]!.finish_reason).toBe('length');
    const plainCalls = (plain.choices[0]!.message.tool_calls ?? []).flatMap((c) => (c.type === 'function' ? [c.function] : []));
    expect(plainCalls.map((c) => c.name)).toEqual(['get_weather']);
    expect(tokensOf(plainCalls)).toBeLessThanOrEqual(MAX);
    expect(plainCalls[0]!.arguments.length).toBeLessThan(JSON.stringify({ city: long }).length);

    const chunks: OpenAI.Chat.ChatCompletionChunk[] = [];
    for await (const c of await client.chat.completions.create({ model, messages: QUESTION, tools: TOOLS, max_tokens: MAX, stream: true })) chunks.push(c);
    expect(chunks.at(-1)!.choices[0]!.finish_reason).toBe('length');
    const pieces = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    const streamed = { name: pieces.find((p) => p.function?.name)?.function?.name ?? '', arguments: pieces.map((p) => p.function?.arguments ?? '').join('') };
    expect(streamed.name).toBe('get_weather');
    expect(tokensOf([streamed])).toBeLessThanOrEqual(MAX);
    expect(streamed.arguments.length).toBeLessThan(JSON.stringify({ city: long }).length);
  });
});

describe('a model that cannot take tools', () => {
  it.each<StandInKind>(['OPENAI', 'ANTHROPIC', 'GOOGLE'])('%s: the provider\u2019s refusal is 400 tools_unsupported, plain and streamed', async (kind) => {
    const { team, ws } = await setupKind(kind);
    s.standIn.set({ refuseTools: true });
    const client = sdk(baseUrl, team.ownerKey);
    for (const stream of [false, true]) {
      const err = await (async () => {
        const r = await client.chat.completions.create({ model: `workspace/${ws.id}`, messages: QUESTION, tools: TOOLS, stream });
        if (stream) for await (const _ of r as AsyncIterable<unknown>) void _;
      })().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OpenAI.BadRequestError);
      const e = err as InstanceType<typeof OpenAI.BadRequestError>;
      expect(e.code).toBe('tools_unsupported');
      expect((e.error as { type?: string }).type).toBe('invalid_request_error');
      expect(e.headers?.get('x-should-retry')).toBe('false');
      expect(JSON.stringify(e.error)).not.toContain(LEAKED_SECRET);
    }
    const logs = await logsOf(t, team.ownerKey);
    expect(logs.map((l) => [l.status, l.error?.split(':')[0]])).toEqual([
      ['error', 'provider_tools_unsupported'],
      ['error', 'provider_tools_unsupported'],
    ]);
    // without tools the same model answers
    const ok = await client.chat.completions.create({ model: `workspace/${ws.id}`, messages: QUESTION });
    expect(ok.choices[0]!.message.content).toBe('Echo: Weather and time in Paris?');
  });
});

describe('bad tool shapes are 400 with the field named, never sent', () => {
  it('refuses malformed tools, tool_choice, tool_calls and tool messages', async () => {
    const { team, ws } = await setupKind('OPENAI');
    const model = `workspace/${ws.id}`;
    const call = (id: string, args = '{}') => ({ id, type: 'function', function: { name: 'get_time', arguments: args } });
    const asked = { role: 'user', content: 'time?' };
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [{ tools: [{ type: 'function', function: { name: 'has space' } }] }, 'tools[0].function.name', 'validation_failed'],
      [{ tools: [{ type: 'retrieval', function: { name: 'get_time' } }] }, 'tools[0].type', 'validation_failed'],
      [{ tools: [{ type: 'function' }] }, 'tools[0].function', 'validation_failed'],
      [{ tools: [TOOLS[1], TOOLS[1]] }, 'tools[1].function.name', 'validation_failed'],
      [{ tools: TOOLS, tool_choice: 'sometimes' }, 'tool_choice', 'validation_failed'],
      [{ tools: TOOLS, tool_choice: { type: 'function', function: { name: 'nope' } } }, 'tool_choice.function.name', 'validation_failed'],
      [{ tool_choice: 'required' }, 'tool_choice', 'validation_failed'],
      [{ functions: [{ name: 'get_time' }] }, 'functions', 'tools_unsupported'],
      [{ messages: [asked, { role: 'tool', content: 'x' }] }, 'messages[1].tool_call_id', 'validation_failed'],
      [{ messages: [asked, { role: 'tool', content: 'x', tool_call_id: 'nobody' }] }, 'messages[1].tool_call_id', 'validation_failed'],
      [{ messages: [asked, { role: 'assistant', content: null, tool_calls: [call('c1')] }] }, 'messages[1].tool_calls[0].id', 'validation_failed'],
      [
        { messages: [asked, { role: 'assistant', content: null, tool_calls: [call('c1', '[1, 2]')] }, { role: 'tool', tool_call_id: 'c1', content: 'x' }] },
        'messages[1].tool_calls[0].function.arguments',
        'validation_failed',
      ],
      [
        { messages: [asked, { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_time' } }] }] },
        'messages[1].tool_calls[0].function.arguments',
        'validation_failed',
      ],
      [{ messages: [{ role: 'user', content: 'x', tool_calls: [call('c1')] }] }, 'messages[0].tool_calls', 'validation_failed'],
      [{ tools: TOOLS, atrium: { store: true } }, 'tools', 'tools_unsupported'],
    ];
    for (const [over, param, code] of cases) {
      const body = { model, messages: [asked], ...over };
      // raw: tool shapes the server refuses, most of them outside the document's types
      const res = await fetch(`${baseUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${team.ownerKey}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const text = await res.text();
      expect(res.status, `${param}: ${text}`).toBe(400);
      const e = (JSON.parse(text) as { error: { param: string; code: string; message: string } }).error;
      expect([e.param, e.code], text).toEqual([param, code]);
    }
    expect(s.standIn.requests).toEqual([]);
    expect(await logsOf(t, team.ownerKey)).toEqual([]);
  });
});

describe('context fit keeps a tool exchange whole', () => {
  const bigArgs = JSON.stringify({ text: 'lorem ipsum '.repeat(400) });
  const conversation = [
    { role: 'user', content: 'first question' },
    { role: 'assistant', content: null, tool_calls: [{ id: 'c_big', type: 'function', function: { name: 'get_time', arguments: bigArgs } }] },
    { role: 'tool', tool_call_id: 'c_big', content: 'short result' },
    { role: 'assistant', content: 'It is noon.' },
    { role: 'user', content: 'and now?' },
  ];

  it('a call too big for the window is dropped with its result (the result alone would fit)', async () => {
    const { team, ws } = await setupKind('OPENAI', { contextWindow: 600 });
    const r = await sdk(baseUrl, team.ownerKey).chat.completions.create({
      model: `workspace/${ws.id}`,
      messages: conversation as OpenAI.Chat.ChatCompletionMessageParam[],
      tools: TOOLS,
      max_tokens: 50,
    });
    expect(r.choices[0]!.message.content).toBe('Echo: and now?');
    const sent = lastSent().body.messages as Array<{ role: string; content: string | null }>;
    expect(sent).toEqual([
      { role: 'assistant', content: 'It is noon.' },
      { role: 'user', content: 'and now?' },
    ]);
  });

  it('with room, the exchange is sent whole and in order; a request ending in results keeps its question with them', async () => {
    const { team, ws } = await setupKind('ANTHROPIC', { contextWindow: 600 });
    s.standIn.set({ toolCalls: CALLS });
    const client = sdk(baseUrl, team.ownerKey);
    const small = conversation.map((m) =>
      m.role === 'assistant' && m.tool_calls ? { ...m, tool_calls: [{ ...m.tool_calls[0]!, function: { name: 'get_time', arguments: '{}' } }] } : m,
    );
    await client.chat.completions.create({
      model: `workspace/${ws.id}`,
      messages: small as OpenAI.Chat.ChatCompletionMessageParam[],
      tools: TOOLS,
      max_tokens: 50,
    });
    expect(lastSent().body.messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user']);
    // the tail is the last question and the big exchange after it: never cut, though it fills the window
    const r = await client.chat.completions.create({
      model: `workspace/${ws.id}`,
      messages: [...small.slice(0, 4), ...conversation.slice(4), conversation[1]!, conversation[2]!].map((m, i) =>
        i >= 5 && 'tool_calls' in m && m.tool_calls
          ? { ...m, tool_calls: [{ ...m.tool_calls[0]!, id: 'c_tail' }] }
          : i >= 5 && m.role === 'tool'
            ? { ...m, tool_call_id: 'c_tail' }
            : m,
      ) as OpenAI.Chat.ChatCompletionMessageParam[],
      tools: TOOLS,
      max_tokens: 50,
    });
    expect(r.choices[0]!.message.content).toBe('Tool said: short result');
    const sent = lastSent().body.messages as Array<{ role: string; content: unknown }>;
    expect(sent.slice(-3)).toEqual([
      { role: 'user', content: 'and now?' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'c_tail', name: 'get_time', input: JSON.parse(bigArgs) }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c_tail', content: 'short result' }] },
    ]);
    // the earlier exchange did not fit beside it and went whole
    expect(JSON.stringify(sent)).not.toContain('c_big');
  });
});

describe('context for a request that ends in tool results', () => {
  it('is searched with the last user question, not the tool result, and sent beside the exchange', async () => {
    const { team, model } = await setupKind('OPENAI');
    const entry = await createPlus(t, team.ownerKey, { title: 'Billing', isPublic: 'true' }, 'Invoices are payable within thirty days of receipt.');
    const leave = await createPlus(t, team.ownerKey, { title: 'Leave', isPublic: 'true' }, 'Holiday leave: every employee has thirty vacation days off.');
    const ws = await createWorkspace(t, team.ownerKey, { modelIds: [model.id], plusIds: [entry.id, leave.id] });
    const r = (await sdk(baseUrl, team.ownerKey).chat.completions.create({
      model: `workspace/${ws.id}`,
      messages: [
        { role: 'user', content: 'When are invoices payable?' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_time', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: 'holiday vacation leave days off' },
      ],
      tools: TOOLS,
    })) as OpenAI.Chat.ChatCompletion & { atrium_sources?: Array<{ plusId: string; excerpt: string }> };
    // the question's entry ranks first (searched with the tool result, the other would)
    expect(r.atrium_sources?.[0]).toMatchObject({ plusId: entry.id });
    expect(r.atrium_sources![0]!.excerpt).toContain('thirty days of receipt');
    const sent = lastSent().body.messages as Array<{ role: string; content: string | null }>;
    expect(sent.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool']);
    expect(sent[0]!.content).toContain('thirty days of receipt');
    expect(r.choices[0]!.message.content).toBe('Tool said: holiday vacation leave days off');
  });
});

describe('the Vercel AI SDK runs a tool through /v1', () => {
  const provider = (key: string) => createOpenAICompatible({ name: 'atrium', baseURL: `${baseUrl}/v1`, apiKey: key, includeUsage: true });
  const weather = () =>
    tool({
      description: 'Weather of a city',
      inputSchema: jsonSchema<{ city: string }>(WEATHER_PARAMS as Parameters<typeof jsonSchema>[0]),
      execute: async ({ city }) => ({ city, temp: 21 }),
    });

  it.each<StandInKind>(['OPENAI', 'ANTHROPIC', 'GOOGLE'])('generateText and streamText with a %s model: the call, its result, the final text', async (kind) => {
    const { team, ws } = await setupKind(kind);
    s.standIn.set({ toolCalls: [CALLS[0]!] });
    const model = provider(team.ownerKey)(`workspace/${ws.id}`);
    // the SDK sends the tool's output as JSON text; Gemini gets it as the functionResponse object
    const expected = 'Tool said: {"city":"Paris","temp":21}';

    const g = await generateText({ model, prompt: 'Weather in Paris?', tools: { get_weather: weather() }, stopWhen: stepCountIs(2), maxRetries: 0 });
    expect(g.steps.map((st) => st.finishReason)).toEqual(['tool-calls', 'stop']);
    expect(g.steps[0]!.toolCalls.map((c) => [c.toolName, c.input])).toEqual([['get_weather', { city: 'Paris' }]]);
    expect(g.text).toBe(expected);

    const st = streamText({ model, prompt: 'Weather in Paris?', tools: { get_weather: weather() }, stopWhen: stepCountIs(2), maxRetries: 0 });
    const kinds: string[] = [];
    for await (const part of st.fullStream) kinds.push(part.type);
    expect(kinds).toContain('tool-call');
    expect(kinds).toContain('tool-result');
    expect(await st.text).toBe(expected);
    expect((await st.steps).map((x) => x.finishReason)).toEqual(['tool-calls', 'stop']);

    const logs = await logsOf(t, team.ownerKey);
    expect(logs).toHaveLength(4);
    expect(logs.map((l) => l.response!.startsWith('[tool call '))).toEqual([false, true, false, true]);
  });
});
