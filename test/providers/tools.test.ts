/**
 * Tools through each adapter, against the stand-in speaking each wire format: the one internal
 * form (ToolOptions, assistant `toolCalls`, `tool` messages) goes out as the protocol's own, and
 * the protocol's calls come back as ToolCalls (plain) or ToolCallDeltas (streamed).
 */
import { describe, expect, it } from 'vitest';
import { classifyProviderError, getAdapter, type ChatMessage, type ToolOptions } from '../../src/providers/index.js';
import { useStandIn, type StandInKind } from '../support/use-standin.js';
import { collect, makeRequest } from './_helpers.js';

const s = useStandIn();

const WEATHER = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
const TOOLS: ToolOptions = {
  definitions: [
    { name: 'get_weather', description: 'Weather of a city', parameters: WEATHER },
    { name: 'get_time', parameters: { type: 'object', properties: {} } },
  ],
  choice: 'required',
  parallel: false,
};
const CALLS = [
  { name: 'get_weather', arguments: { city: 'Paris' } },
  { name: 'get_time', arguments: {} },
];
/** A conversation after the model's two calls: their results, and a last question about them. */
const FOLLOW_UP: ChatMessage[] = [
  { role: 'system', content: 'Be brief.' },
  { role: 'user', content: 'Weather and time in Paris?' },
  {
    role: 'assistant',
    content: 'Looking.',
    toolCalls: [
      { id: 'call_a', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { id: 'call_b', name: 'get_time', arguments: '' },
    ],
  },
  { role: 'tool', toolCallId: 'call_a', content: '{"temp":21}' },
  { role: 'tool', toolCallId: 'call_b', content: 'noon' },
];

const kinds: StandInKind[] = ['OPENAI', 'ANTHROPIC', 'GOOGLE'];

describe.each(kinds)('%s', (kind) => {
  const adapter = () => getAdapter(s.target(kind).apiBase, s.target(kind).connectionType);

  it('returns the model\u2019s calls, plain and streamed, with finish reason tool_calls', async () => {
    s.standIn.set({ toolCalls: CALLS });
    const plain = await adapter().complete(makeRequest(s.target(kind), { tools: TOOLS }));
    expect(plain.finishReason).toBe('tool_calls');
    expect(plain.content).toBe('');
    expect(plain.toolCalls!.map((c) => [c.name, JSON.parse(c.arguments)])).toEqual([
      ['get_weather', { city: 'Paris' }],
      ['get_time', {}],
    ]);
    const ids = plain.toolCalls!.map((c) => c.id);
    if (kind === 'GOOGLE') expect(ids.every((id) => /^call_[0-9a-f]{24}$/.test(id))).toBe(true);
    else
      expect(ids.map((id) => id.replace(/_\d+_/, '_N_'))).toEqual(
        kind === 'ANTHROPIC' ? ['toolu_standin_N_0', 'toolu_standin_N_1'] : ['call_standin_N_0', 'call_standin_N_1'],
      );
    expect(new Set(ids).size).toBe(2);

    const streamed = await collect(adapter().stream(makeRequest(s.target(kind), { tools: TOOLS })));
    expect(streamed.error).toBeUndefined();
    expect(streamed.done?.finishReason).toBe('tool_calls');
    expect(streamed.deltas.join('')).toBe('');
    // the first piece of each call names it; the pieces' arguments, in order, are its JSON
    const byIndex = new Map<number, { id?: string; name?: string; args: string; pieces: number }>();
    for (const d of streamed.toolCalls) {
      const c = byIndex.get(d.index);
      if (!c) {
        expect(d.id, JSON.stringify(d)).toBeTruthy();
        expect(d.name).toBeTruthy();
        byIndex.set(d.index, { id: d.id, name: d.name, args: d.arguments, pieces: 1 });
      } else {
        expect(d.name).toBeUndefined();
        c.args += d.arguments;
        c.pieces++;
      }
    }
    expect([...byIndex.entries()].map(([i, c]) => [i, c.name, JSON.parse(c.args)])).toEqual([
      [0, 'get_weather', { city: 'Paris' }],
      [1, 'get_time', {}],
    ]);
    // Gemini sends whole calls (one piece each); the others stream the arguments in pieces
    expect(byIndex.get(0)!.pieces).toBe(kind === 'GOOGLE' ? 1 : 3);
  });

  it('sends the tools and the tool exchange in the protocol\u2019s own form, and answers the results', async () => {
    s.standIn.set({ toolCalls: CALLS });
    const res = await adapter().complete(makeRequest(s.target(kind), { tools: TOOLS, messages: FOLLOW_UP }));
    const body = s.standIn.requests[0]!.body;
    if (kind === 'OPENAI') {
      expect(body.tools).toEqual([
        { type: 'function', function: { name: 'get_weather', description: 'Weather of a city', parameters: WEATHER } },
        { type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: {} } } },
      ]);
      expect(body.tool_choice).toBe('required');
      expect(body.parallel_tool_calls).toBe(false);
      expect(body.messages.slice(2)).toEqual([
        {
          role: 'assistant',
          content: 'Looking.',
          tool_calls: [
            { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            { id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_a', content: '{"temp":21}' },
        { role: 'tool', tool_call_id: 'call_b', content: 'noon' },
      ]);
      expect(res.content).toBe('Tool said: {"temp":21} | noon');
    } else if (kind === 'ANTHROPIC') {
      expect(body.tools).toEqual([
        { name: 'get_weather', description: 'Weather of a city', input_schema: WEATHER },
        { name: 'get_time', input_schema: { type: 'object', properties: {} } },
      ]);
      expect(body.tool_choice).toEqual({ type: 'any', disable_parallel_tool_use: true });
      expect(body.system).toBe('Be brief.');
      expect(body.messages).toEqual([
        { role: 'user', content: 'Weather and time in Paris?' },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Looking.' },
            { type: 'tool_use', id: 'call_a', name: 'get_weather', input: { city: 'Paris' } },
            { type: 'tool_use', id: 'call_b', name: 'get_time', input: {} },
          ],
        },
        {
          // consecutive results: one user turn
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'call_a', content: '{"temp":21}' },
            { type: 'tool_result', tool_use_id: 'call_b', content: 'noon' },
          ],
        },
      ]);
      expect(res.content).toBe('Tool said: {"temp":21} | noon');
    } else {
      expect(body.tools).toEqual([
        {
          functionDeclarations: [
            { name: 'get_weather', description: 'Weather of a city', parametersJsonSchema: WEATHER },
            { name: 'get_time', parametersJsonSchema: { type: 'object', properties: {} } },
          ],
        },
      ]);
      expect(body.toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY' } });
      expect(body.systemInstruction).toEqual({ parts: [{ text: 'Be brief.' }], role: 'user' });
      expect(body.contents).toEqual([
        { role: 'user', parts: [{ text: 'Weather and time in Paris?' }] },
        {
          role: 'model',
          parts: [{ text: 'Looking.' }, { functionCall: { name: 'get_weather', args: { city: 'Paris' } } }, { functionCall: { name: 'get_time', args: {} } }],
        },
        {
          // no ids in Gemini: each result is named after its call
          role: 'user',
          parts: [
            { functionResponse: { name: 'get_weather', response: { temp: 21 } } },
            { functionResponse: { name: 'get_time', response: { output: 'noon' } } },
          ],
        },
      ]);
      expect(res.content).toBe('Tool said: {"temp":21} | {"output":"noon"}');
    }
    expect(res.finishReason).toBe('stop');
    expect(res.toolCalls).toBeUndefined();
  });

  it('maps each tool_choice', async () => {
    const choices: Array<[ToolOptions['choice'], unknown]> =
      kind === 'OPENAI'
        ? [
            ['auto', 'auto'],
            ['none', 'none'],
            [{ name: 'get_time' }, { type: 'function', function: { name: 'get_time' } }],
          ]
        : kind === 'ANTHROPIC'
          ? [
              ['auto', { type: 'auto' }],
              ['none', { type: 'none' }],
              [{ name: 'get_time' }, { type: 'tool', name: 'get_time' }],
            ]
          : [
              ['auto', { functionCallingConfig: { mode: 'AUTO' } }],
              ['none', { functionCallingConfig: { mode: 'NONE' } }],
              [{ name: 'get_time' }, { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_time'] } }],
            ];
    for (const [choice, wire] of choices) {
      await adapter().complete(makeRequest(s.target(kind), { tools: { definitions: TOOLS.definitions, ...(choice ? { choice } : {}) } }));
      const body = s.standIn.requests.at(-1)!.body;
      expect(kind === 'GOOGLE' ? body.toolConfig : body.tool_choice).toEqual(wire);
    }
    // no tools: nothing of them is sent
    await adapter().complete(makeRequest(s.target(kind)));
    const plain = s.standIn.requests.at(-1)!.body;
    expect([plain.tools, plain.tool_choice, plain.toolConfig]).toEqual([undefined, undefined, undefined]);
  });

  it('a model that refuses tools is a provider_tools_unsupported error (400)', async () => {
    s.standIn.set({ refuseTools: true });
    const err = await adapter()
      .complete(makeRequest(s.target(kind), { tools: TOOLS }))
      .catch((e: unknown) => e);
    const pe = classifyProviderError(err);
    expect(pe.kind).toBe('upstream_tools_unsupported');
    expect(pe.code).toBe('provider_tools_unsupported');
    expect(pe.message).not.toContain('LEAKED');
    const streamed = await collect(adapter().stream(makeRequest(s.target(kind), { tools: TOOLS })));
    expect(classifyProviderError(streamed.error).kind).toBe('upstream_tools_unsupported');
  });
});
