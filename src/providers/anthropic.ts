/**
 * Anthropic Messages adapter (`@anthropic-ai/sdk`).
 *
 * URL form (target.url): the API origin WITHOUT the version segment, e.g.
 * `https://api.anthropic.com` (the default when url is null); requests go to `{url}/v1/messages`.
 * A trailing `/v1` is tolerated and stripped.
 *
 * Auth: SDK 1.x sends the key as `Authorization: Bearer {apiKey}` (not `x-api-key`).
 *
 * Mapping: system messages -> top-level `system` (joined with blank lines); consecutive
 * same-role messages are merged (the protocol requires user/assistant alternation);
 * `max_tokens` is required by the protocol and defaults to {@link DEFAULT_ANTHROPIC_MAX_TOKENS};
 * temperature and top_p are dropped: `@anthropic-ai/sdk` 1.x pins API version 2026-10-21
 * (`anthropic-version` header), whose Messages API has no sampling parameters any more (the SDK
 * removed them from its types); n, frequency/presence penalties and logit bias have no
 * equivalent either and are dropped.
 *
 * Tools: definitions -> `tools` ({name, description, input_schema}); choice auto / required /
 * {name} / none -> `tool_choice` {type: auto | any | tool | none}, `parallel: false` ->
 * `disable_parallel_tool_use`. An assistant's calls are `tool_use` blocks after its text; tool
 * results are `tool_result` blocks of the next user turn (consecutive results, and a user text
 * after them, make one turn, results first). Answers' `tool_use` blocks become tool calls, their
 * `input` as JSON text; streamed, `content_block_start` (tool_use) opens a call and each
 * `input_json_delta` adds its `partial_json`.
 */
import type Anthropic from '@anthropic-ai/sdk';
import { guardedCall, guardedStream, sdkTimeoutMs, usageOf, type StreamState } from './call-control.js';
import { providerBadResponse } from './errors.js';
import type { ChatMessage, Completion, FinishReason, ProviderAdapter, ProviderRequest, StreamEvent, ToolCall, ToolOptions, Usage } from './types.js';
import { ClientCache, clientKey, isToolMessage, joinedText, lazy, NO_REDIRECT, posInt, splitSystemAndGroup, toolArguments, trimSlashes } from './util.js';

export const DEFAULT_ANTHROPIC_BASE_URL = 'https://api.anthropic.com';
export const DEFAULT_ANTHROPIC_MAX_TOKENS = 1024;

type Body = Anthropic.MessageCreateParamsNonStreaming;
type Event = Anthropic.RawMessageStreamEvent;

export function normalizeAnthropicStopReason(reason: string | null | undefined): FinishReason {
  switch (reason) {
    case 'end_turn':
    case 'stop_sequence':
      return 'stop';
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'refusal':
      return 'content_filter';
    default:
      return 'other'; // pause_turn, unknown
  }
}

/**
 * The SDK loads on the first Anthropic call. It resolves credentials lazily from env / profile
 * files / workload identity when none is passed; a model with no key must send no credential —
 * never the server's own — so that chain is switched off.
 */
const loadSdk = lazy(async () => {
  const { default: AnthropicClient } = await import('@anthropic-ai/sdk');
  return class IsolatedAnthropic extends AnthropicClient {
    protected override _shouldResolveDefaultCredentials(): boolean {
      return false;
    }
  };
});

/** One SDK client per (URL, key fingerprint), built once and shared by concurrent calls. */
const clients = new ClientCache<Promise<Anthropic>>();

export function anthropicBaseUrl(url: string | null): string {
  if (!url) return DEFAULT_ANTHROPIC_BASE_URL;
  return trimSlashes(url).replace(/\/v1$/, '');
}

function clientFor(req: ProviderRequest): Promise<Anthropic> {
  const baseURL = anthropicBaseUrl(req.target.url);
  const key = req.target.apiKey;
  return clients.get(clientKey([baseURL], key), async () => {
    const IsolatedAnthropic = await loadSdk();
    return new IsolatedAnthropic({
      baseURL,
      ...(key ? { apiKey: key } : { apiKey: null, authToken: null, defaultHeaders: { Authorization: null } }),
      maxRetries: 0,
      logLevel: 'off',
      fetchOptions: NO_REDIRECT,
    });
  });
}

type ContentBlock = Anthropic.ContentBlockParam;

/** Whether a message needs content blocks (a tool call or result, or images) rather than plain text. */
const needsBlocks = (m: ChatMessage) => isToolMessage(m) || (m.images?.length ?? 0) > 0;

/** A turn with a tool call or result (or an image) as content blocks: results first (the protocol wants them so), texts, calls. */
function blocksOf(messages: readonly ChatMessage[]): ContentBlock[] {
  const results: ContentBlock[] = [];
  const rest: ContentBlock[] = [];
  for (const m of messages) {
    if (m.role === 'tool') {
      results.push({ type: 'tool_result', tool_use_id: m.toolCallId ?? '', ...(m.content ? { content: m.content } : {}) });
      continue;
    }
    // Images before their text, as the protocol recommends.
    for (const i of m.images ?? []) rest.push({ type: 'image', source: { type: 'base64', media_type: i.mimeType as 'image/png', data: i.data } });
    if (m.content) rest.push({ type: 'text', text: m.content });
    for (const c of m.toolCalls ?? []) rest.push({ type: 'tool_use', id: c.id, name: c.name, input: toolArguments(c.arguments) });
  }
  return [...results, ...rest];
}

function applyTools(body: Body, tools: ToolOptions | undefined): void {
  if (!tools || tools.definitions.length === 0) return;
  body.tools = tools.definitions.map((d) => ({
    name: d.name,
    ...(d.description !== undefined ? { description: d.description } : {}),
    input_schema: { type: 'object', ...d.parameters } as Anthropic.Tool.InputSchema,
  }));
  const c = tools.choice;
  const single = tools.parallel === false ? { disable_parallel_tool_use: true } : {};
  if (c === 'none') body.tool_choice = { type: 'none' };
  else if (c === 'required') body.tool_choice = { type: 'any', ...single };
  else if (typeof c === 'object') body.tool_choice = { type: 'tool', name: c.name, ...single };
  else if (c === 'auto' || tools.parallel === false) body.tool_choice = { type: 'auto', ...single };
}

export function buildAnthropicBody(req: ProviderRequest): Body {
  const { system, turns } = splitSystemAndGroup(req.messages);
  const p = req.params;
  const body: Body = {
    model: req.target.baseModel,
    max_tokens: posInt(p.maxTokens) ?? DEFAULT_ANTHROPIC_MAX_TOKENS,
    messages: turns.map((t) => ({ role: t.role, content: t.messages.some(needsBlocks) ? blocksOf(t.messages) : joinedText(t.messages) })),
  };
  if (system !== null) body.system = system;
  applyTools(body, req.tools);
  if (p.stop && p.stop.length > 0) body.stop_sequences = p.stop;
  // temperature / top_p: not part of Messages API version 2026-10-21, which this SDK pins
  // (`anthropic-version` header) — they are dropped, like n, penalties and logit bias.
  return body;
}

function requestOptions(req: ProviderRequest, signal: AbortSignal): Anthropic.RequestOptions {
  // An explicit timeout also skips the SDK's "non-streaming call may exceed 10 minutes" refusal.
  return { signal, timeout: sdkTimeoutMs(req.timeouts), maxRetries: 0 };
}

function usageFrom(u: Partial<Anthropic.Usage> | null | undefined): Usage {
  const input = (u?.input_tokens ?? 0) + (u?.cache_creation_input_tokens ?? 0) + (u?.cache_read_input_tokens ?? 0);
  return usageOf(input, u?.output_tokens);
}

export function toAnthropicCompletion(msg: unknown): Completion {
  const content = (msg as { content?: unknown } | null)?.content;
  if (!Array.isArray(content)) throw providerBadResponse();
  let text = '';
  const toolCalls: ToolCall[] = [];
  for (const block of content) {
    if (block && (block as { type?: unknown }).type === 'text' && typeof (block as { text?: unknown }).text === 'string') {
      text += (block as { text: string }).text;
    } else if (block && (block as { type?: unknown }).type === 'tool_use') {
      const b = block as { id?: unknown; name?: unknown; input?: unknown };
      if (typeof b.id !== 'string' || typeof b.name !== 'string') throw providerBadResponse('a tool call without an id or name');
      toolCalls.push({ id: b.id, name: b.name, arguments: JSON.stringify(b.input ?? {}) });
    }
  }
  const m = msg as Anthropic.Message;
  return {
    content: text,
    ...(toolCalls.length > 0 ? { toolCalls } : {}),
    finishReason: normalizeAnthropicStopReason(m.stop_reason),
    usage: usageFrom(m.usage),
  };
}

export interface AnthropicTokenCounts {
  input: number;
  output: number;
  /** content block index -> tool call index (0-based among the answer's calls) */
  toolBlocks?: Map<number, number>;
  /** tool calls whose input has arrived in part (one with none gets `{}` when its block stops) */
  toolInput?: Set<number>;
}

export function onAnthropicEvent(ev: Event, state: StreamState, counts: AnthropicTokenCounts): string | null {
  if (!ev || typeof ev !== 'object') throw providerBadResponse();
  switch (ev.type) {
    case 'message_start': {
      const u = ev.message?.usage;
      counts.input = (u?.input_tokens ?? 0) + (u?.cache_creation_input_tokens ?? 0) + (u?.cache_read_input_tokens ?? 0);
      counts.output = u?.output_tokens ?? 0;
      state.usage = usageOf(counts.input, counts.output);
      return null;
    }
    case 'content_block_start': {
      const b = ev.content_block as { type?: unknown; id?: unknown; name?: unknown } | undefined;
      if (b?.type !== 'tool_use') return null;
      if (typeof b.id !== 'string' || typeof b.name !== 'string') throw providerBadResponse('a tool call without an id or name');
      counts.toolBlocks ??= new Map();
      const index = counts.toolBlocks.size;
      counts.toolBlocks.set(ev.index, index);
      state.toolCalls.push({ index, id: b.id, name: b.name, arguments: '' });
      return null;
    }
    case 'content_block_delta':
      if (ev.delta?.type === 'input_json_delta') {
        const index = counts.toolBlocks?.get(ev.index);
        if (index === undefined) throw providerBadResponse('tool input for a block that is no tool call');
        if (ev.delta.partial_json) {
          (counts.toolInput ??= new Set()).add(index);
          state.toolCalls.push({ index, arguments: ev.delta.partial_json });
        }
        return null;
      }
      return ev.delta?.type === 'text_delta' && typeof ev.delta.text === 'string' ? ev.delta.text : null;
    case 'content_block_stop': {
      const index = counts.toolBlocks?.get(ev.index);
      if (index !== undefined && !counts.toolInput?.has(index)) state.toolCalls.push({ index, arguments: '{}' });
      return null;
    }
    case 'message_delta': {
      const u = ev.usage;
      if (u) {
        // Cumulative counts; input fields are only present on some API versions.
        if (typeof u.input_tokens === 'number') {
          counts.input = u.input_tokens + (u.cache_creation_input_tokens ?? 0) + (u.cache_read_input_tokens ?? 0);
        }
        if (typeof u.output_tokens === 'number') counts.output = u.output_tokens;
        state.usage = usageOf(counts.input, counts.output);
      }
      if (ev.delta?.stop_reason) state.finishReason = normalizeAnthropicStopReason(ev.delta.stop_reason);
      return null;
    }
    default:
      return null;
  }
}

export const anthropicAdapter: ProviderAdapter = {
  async complete(req: ProviderRequest): Promise<Completion> {
    return guardedCall(req, async (signal) => {
      const msg = await (await clientFor(req)).messages.create(buildAnthropicBody(req), requestOptions(req, signal));
      return toAnthropicCompletion(msg);
    });
  },

  stream(req: ProviderRequest): AsyncIterable<StreamEvent> {
    const counts: AnthropicTokenCounts = { input: 0, output: 0 };
    return guardedStream<Event>(
      req,
      async (signal) => (await clientFor(req)).messages.create({ ...buildAnthropicBody(req), stream: true }, requestOptions(req, signal)),
      (ev, state) => onAnthropicEvent(ev, state, counts),
    );
  },
};
