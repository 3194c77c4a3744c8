import type {
  ChatMessage,
  GenerationParams,
  ProviderRequest,
  ProviderTarget,
  ProviderTimeouts,
  StreamEvent,
  ToolCallDelta,
  ToolOptions,
  Usage,
} from '../../src/providers/index.js';

export const TIMEOUTS: ProviderTimeouts = { connectMs: 2000, totalMs: 5000, idleMs: 2000 };

export const CONVERSATION: ChatMessage[] = [
  { role: 'system', content: 'You are terse.' },
  { role: 'user', content: 'hello there' },
];

/** What the stand-in answers for CONVERSATION: prompt = ceil((14 + 11) / 4), completion = 3 word chunks. */
export const EXPECTED_USAGE: Usage = { promptTokens: 7, completionTokens: 3, totalTokens: 10 };

export type TargetSpec = ProviderTarget;

export function makeRequest(
  target: TargetSpec,
  overrides: { messages?: ChatMessage[]; params?: GenerationParams; signal?: AbortSignal; timeouts?: Partial<ProviderTimeouts>; tools?: ToolOptions } = {},
): ProviderRequest {
  return {
    target,
    messages: overrides.messages ?? CONVERSATION,
    params: overrides.params ?? {},
    ...(overrides.tools ? { tools: overrides.tools } : {}),
    ...(overrides.signal ? { signal: overrides.signal } : {}),
    timeouts: { ...TIMEOUTS, ...overrides.timeouts },
  };
}

export interface Collected {
  deltas: string[];
  toolCalls: ToolCallDelta[];
  done: Extract<StreamEvent, { type: 'done' }> | undefined;
  error: unknown;
}

/** Consume a stream fully, capturing deltas, the done event and the error (if any). */
export async function collect(stream: AsyncIterable<StreamEvent>, onDelta?: (text: string, index: number) => void): Promise<Collected> {
  const out: Collected = { deltas: [], toolCalls: [], done: undefined, error: undefined };
  try {
    for await (const ev of stream) {
      if (ev.type === 'delta') {
        out.deltas.push(ev.content);
        onDelta?.(ev.content, out.deltas.length - 1);
      } else if (ev.type === 'tool_call') {
        out.toolCalls.push(ev.call);
      } else {
        out.done = ev;
      }
    }
  } catch (err) {
    out.error = err;
  }
  return out;
}

/** Resolves with the rejection reason; fails the test if the promise resolves. */
export async function rejectionOf(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error('expected the promise to reject');
}
