/**
 * OpenAI chat-completions adapter (also any OpenAI-compatible server, and Azure OpenAI).
 *
 * URL forms (target.url):
 * - connectionType URL: the API base *including* the version segment, exactly what the SDK calls
 *   `baseURL`: `https://api.openai.com/v1` (the default when url is null),
 *   `http://localhost:11434/v1`, `https://openrouter.ai/api/v1`, ... Requests go to
 *   `{url}/chat/completions`. Auth: `Authorization: Bearer {apiKey}`.
 * - connectionType AZURE (AzureOpenAI client, auth header `api-key: {apiKey}`), one of
 *     1. `https://{resource}.openai.azure.com`                 (endpoint; deployment = baseModel)
 *     2. `https://{resource}.openai.azure.com/openai`          (same, explicit /openai)
 *     3. `https://{resource}.openai.azure.com/openai/deployments/{deployment}` (deployment from URL)
 *   each optionally followed by `?api-version=YYYY-MM-DD[-preview]` (default
 *   {@link DEFAULT_AZURE_API_VERSION}). A pasted `.../chat/completions` suffix is ignored.
 *   Requests go to `.../openai/deployments/{deployment}/chat/completions?api-version=...`.
 *   4. `https://{resource}.openai.azure.com/openai/v1` — Azure's version-less "v1" API: plain
 *      OpenAI client with baseURL = url, key sent as `api-key`, no api-version, model = baseModel.
 *
 * Only choice 0 is returned: `n` is forwarded (the upstream generates — and bills — n choices),
 * but only the text of the choice with index 0 reaches the caller.
 *
 * Max tokens: sent as `max_completion_tokens` to api.openai.com (or url null) and Azure (the
 * only field reasoning models accept there), as the widely supported `max_tokens` to every
 * other OpenAI-compatible server.
 */
import type OpenAI from 'openai';
import { guardedCall, guardedStream, sdkTimeoutMs, usageOf, type StreamState } from './call-control.js';
import { providerBadResponse } from './errors.js';
import type { ChatMessage, Completion, FinishReason, ProviderAdapter, ProviderRequest, StreamEvent, ToolCall, ToolOptions } from './types.js';
import { providerFetch } from './transport.js';
import { ClientCache, clientKey, lazy, NO_REDIRECT, num, posInt, trimSlashes } from './util.js';

/** The SDK loads on the first OpenAI / Azure call, not at start-up. */
const loadSdk = lazy(() => import('openai'));

export const DEFAULT_OPENAI_BASE_URL = 'https://api.openai.com/v1';
export const DEFAULT_AZURE_API_VERSION = '2024-10-21';

type ChatBody = OpenAI.Chat.ChatCompletionCreateParamsNonStreaming;
type Chunk = OpenAI.Chat.ChatCompletionChunk;

export function normalizeOpenAIFinishReason(reason: string | null | undefined): FinishReason {
  switch (reason) {
    case 'stop':
      return 'stop';
    case 'length':
      return 'length';
    case 'content_filter':
      return 'content_filter';
    case 'tool_calls':
    case 'function_call':
      return 'tool_calls';
    default:
      return 'other';
  }
}

export interface AzureConfig {
  /** Base URL handed to the SDK. */
  baseURL: string;
  /** null for the version-less v1 API. */
  apiVersion: string | null;
  /** Deployment the SDK inserts into the path (undefined when the URL already names it / v1 API). */
  deployment: string | undefined;
  v1: boolean;
}

/** Parse an Azure OpenAI URL (see the module comment for the accepted forms). */
export function parseAzureUrl(url: string, baseModel: string): AzureConfig {
  const u = new URL(url);
  const apiVersion = u.searchParams.get('api-version') || DEFAULT_AZURE_API_VERSION;
  let path = trimSlashes(u.pathname).replace(/\/chat\/completions$/, '');
  path = trimSlashes(path);
  const origin = u.origin;
  if (/\/openai\/v1$/.test(path)) {
    return { baseURL: origin + path, apiVersion: null, deployment: undefined, v1: true };
  }
  if (/\/openai\/deployments\/[^/]+$/.test(path)) {
    return { baseURL: origin + path, apiVersion, deployment: undefined, v1: false };
  }
  const base = path.endsWith('/openai') ? origin + path : `${origin}${path}/openai`;
  return { baseURL: base, apiVersion, deployment: baseModel, v1: false };
}

type MaxTokensField = 'max_tokens' | 'max_completion_tokens';
interface CachedClient {
  client: OpenAI;
  maxTokensField: MaxTokensField;
}

/** One SDK client per (mode, URL, deployment, key fingerprint), built once and shared by concurrent calls. */
const clients = new ClientCache<Promise<CachedClient>>();

type Mode = 'URL' | 'AZURE';

function clientFor(req: Pick<ProviderRequest, 'target'>, mode: Mode): Promise<CachedClient> {
  const { target } = req;
  const cacheKey = clientKey([mode, target.url, mode === 'AZURE' ? target.baseModel : null], target.apiKey);
  return clients.get(cacheKey, () => {
    const built = buildClient(target.url, target.baseModel, target.apiKey, mode);
    built.catch(() => clients.delete(cacheKey)); // a failed build (bad Azure URL) is not kept
    return built;
  });
}

async function buildClient(url: string | null, baseModel: string, key: string | null, mode: Mode): Promise<CachedClient> {
  const { default: OpenAIClient, AzureOpenAI } = await loadSdk();
  const common = {
    maxRetries: 0,
    logLevel: 'off' as const,
    fetch: providerFetch,
    fetchOptions: NO_REDIRECT,
    // Explicit nulls: never pick up OPENAI_ORG_ID / OPENAI_PROJECT_ID etc. from the server's env.
    organization: null,
    project: null,
    webhookSecret: null,
    adminAPIKey: null,
  };
  if (mode === 'AZURE') {
    if (!url) throw new TypeError('An Azure OpenAI model needs a url (the resource endpoint or deployment URL)');
    const cfg = parseAzureUrl(url, baseModel);
    const client = cfg.v1
      ? new OpenAIClient({
          ...common,
          baseURL: cfg.baseURL,
          apiKey: 'unused',
          // Azure keys travel in `api-key`; drop the SDK's Authorization header.
          defaultHeaders: { Authorization: null, 'api-key': key ?? null },
        })
      : new AzureOpenAI({
          ...common,
          baseURL: cfg.baseURL,
          apiVersion: cfg.apiVersion ?? DEFAULT_AZURE_API_VERSION,
          ...(cfg.deployment !== undefined ? { deployment: cfg.deployment } : {}),
          apiKey: key ?? 'unused',
          ...(key ? {} : { defaultHeaders: { 'api-key': null } }),
        });
    return { client, maxTokensField: 'max_completion_tokens' };
  }
  const baseURL = url ? trimSlashes(url) : DEFAULT_OPENAI_BASE_URL;
  const client = new OpenAIClient({
    ...common,
    baseURL,
    apiKey: key ?? 'unused',
    ...(key ? {} : { defaultHeaders: { Authorization: null } }),
  });
  return { client, maxTokensField: new URL(baseURL).hostname === 'api.openai.com' ? 'max_completion_tokens' : 'max_tokens' };
}

function toWireMessage(m: ChatMessage): OpenAI.Chat.ChatCompletionMessageParam {
  if (m.role === 'tool') return { role: 'tool', tool_call_id: m.toolCallId ?? '', content: m.content };
  if (m.role === 'assistant' && m.toolCalls && m.toolCalls.length > 0) {
    return {
      role: 'assistant',
      content: m.content || null,
      tool_calls: m.toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })),
    };
  }
  if (m.role === 'user' && m.images && m.images.length > 0) {
    const parts: OpenAI.Chat.ChatCompletionContentPart[] = m.content ? [{ type: 'text', text: m.content }] : [];
    for (const i of m.images) parts.push({ type: 'image_url', image_url: { url: `data:${i.mimeType};base64,${i.data}` } });
    return { role: 'user', content: parts };
  }
  return { role: m.role, content: m.content };
}

/** Tools as OpenAI's own `tools`, `tool_choice` and `parallel_tool_calls` (the protocol the internal form follows). */
function applyTools(body: ChatBody, tools: ToolOptions | undefined): void {
  if (!tools || tools.definitions.length === 0) return;
  body.tools = tools.definitions.map((d) => ({
    type: 'function',
    function: {
      name: d.name,
      ...(d.description !== undefined ? { description: d.description } : {}),
      ...(d.parameters !== undefined ? { parameters: d.parameters } : {}),
      ...(d.strict !== undefined ? { strict: d.strict } : {}),
    },
  }));
  const c = tools.choice;
  if (c !== undefined) body.tool_choice = typeof c === 'string' ? c : { type: 'function', function: { name: c.name } };
  if (tools.parallel !== undefined) body.parallel_tool_calls = tools.parallel;
}

function buildBody(req: ProviderRequest, maxTokensField: MaxTokensField): ChatBody {
  const p = req.params;
  const body: ChatBody = {
    model: req.target.baseModel,
    messages: req.messages.map(toWireMessage),
  };
  applyTools(body, req.tools);
  const temperature = num(p.temperature);
  if (temperature !== undefined) body.temperature = temperature;
  const topP = num(p.topP);
  if (topP !== undefined) body.top_p = topP;
  const maxTokens = posInt(p.maxTokens);
  if (maxTokens !== undefined) body[maxTokensField] = maxTokens;
  const n = posInt(p.n);
  if (n !== undefined) body.n = n;
  const fp = num(p.frequencyPenalty);
  if (fp !== undefined) body.frequency_penalty = fp;
  const pp = num(p.presencePenalty);
  if (pp !== undefined) body.presence_penalty = pp;
  if (p.logitBias && Object.keys(p.logitBias).length > 0) body.logit_bias = p.logitBias;
  if (p.stop && p.stop.length > 0) body.stop = p.stop;
  return body;
}

function requestOptions(req: ProviderRequest, signal: AbortSignal): OpenAI.RequestOptions {
  return { signal, timeout: sdkTimeoutMs(req.timeouts), maxRetries: 0 };
}

export function toCompletion(res: unknown): Completion {
  const choices = (res as { choices?: unknown } | null)?.choices;
  if (!Array.isArray(choices)) throw providerBadResponse();
  const choice = (choices.find((c) => (c as { index?: unknown })?.index === 0) ?? choices[0]) as OpenAI.Chat.ChatCompletion.Choice | undefined;
  if (!choice || typeof choice !== 'object') throw providerBadResponse();
  const message = choice.message as { content?: unknown; refusal?: unknown } | undefined;
  const content = typeof message?.content === 'string' ? message.content : typeof message?.refusal === 'string' ? message.refusal : '';
  const u = (res as { usage?: OpenAI.CompletionUsage | null }).usage;
  const toolCalls = toolCallsOf((message as { tool_calls?: unknown } | undefined)?.tool_calls);
  return {
    content,
    ...(toolCalls.length > 0 ? { toolCalls } : {}),
    finishReason: normalizeOpenAIFinishReason(choice.finish_reason),
    usage: usageOf(u?.prompt_tokens, u?.completion_tokens, u?.total_tokens),
  };
}

/** The function calls of an answer's message (other call types are not offered, so not expected). */
function toolCallsOf(raw: unknown): ToolCall[] {
  if (!Array.isArray(raw)) return [];
  const calls: ToolCall[] = [];
  for (const c of raw as Array<{ id?: unknown; function?: { name?: unknown; arguments?: unknown } }>) {
    const f = c?.function;
    if (!f || typeof f.name !== 'string') throw providerBadResponse('a tool call without a function name');
    calls.push({ id: typeof c.id === 'string' ? c.id : '', name: f.name, arguments: typeof f.arguments === 'string' ? f.arguments : '' });
  }
  return calls;
}

export function onOpenAIChunk(chunk: Chunk, state: StreamState): string | null {
  if (!chunk || typeof chunk !== 'object') throw providerBadResponse();
  if (chunk.usage) state.usage = usageOf(chunk.usage.prompt_tokens, chunk.usage.completion_tokens, chunk.usage.total_tokens);
  if (!Array.isArray(chunk.choices)) return null;
  let text: string | null = null;
  for (const c of chunk.choices) {
    if ((c.index ?? 0) !== 0) continue;
    const d = c.delta as { content?: unknown; refusal?: unknown } | undefined;
    if (typeof d?.content === 'string' && d.content) text = (text ?? '') + d.content;
    else if (typeof d?.refusal === 'string' && d.refusal) text = (text ?? '') + d.refusal;
    for (const tc of c.delta?.tool_calls ?? []) {
      state.toolCalls.push({
        index: typeof tc.index === 'number' ? tc.index : 0,
        ...(typeof tc.id === 'string' && tc.id ? { id: tc.id } : {}),
        ...(typeof tc.function?.name === 'string' && tc.function.name ? { name: tc.function.name } : {}),
        arguments: typeof tc.function?.arguments === 'string' ? tc.function.arguments : '',
      });
    }
    if (c.finish_reason) state.finishReason = normalizeOpenAIFinishReason(c.finish_reason);
  }
  return text;
}

function makeAdapter(mode: Mode): ProviderAdapter {
  return {
    async complete(req: ProviderRequest): Promise<Completion> {
      return guardedCall(req, async (signal) => {
        const { client, maxTokensField } = await clientFor(req, mode);
        const res = await client.chat.completions.create(buildBody(req, maxTokensField), requestOptions(req, signal));
        return toCompletion(res);
      });
    },

    stream(req: ProviderRequest): AsyncIterable<StreamEvent> {
      return guardedStream<Chunk>(
        req,
        async (signal) => {
          const { client, maxTokensField } = await clientFor(req, mode);
          return client.chat.completions.create(
            { ...buildBody(req, maxTokensField), stream: true, stream_options: { include_usage: true } },
            requestOptions(req, signal),
          );
        },
        onOpenAIChunk,
      );
    },
  };
}

/** The shared SDK client of a target (embeddings.ts uses it for `/embeddings`). */
export async function openaiClientFor(target: ProviderRequest['target']): Promise<OpenAI> {
  return (await clientFor({ target }, target.connectionType)).client;
}

/** OpenAI / OpenAI-compatible servers (connectionType URL). */
export const openaiAdapter: ProviderAdapter = makeAdapter('URL');
/** Azure OpenAI (connectionType AZURE). */
export const azureOpenaiAdapter: ProviderAdapter = makeAdapter('AZURE');
