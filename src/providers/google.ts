/**
 * Gemini adapter (`@google/genai`, Gemini Developer API — never Vertex).
 *
 * URL form (target.url): the API origin WITHOUT the version segment, e.g.
 * `https://generativelanguage.googleapis.com` (the default when url is null). A trailing
 * `/v1beta`, `/v1alpha` or `/v1` is tolerated: it is stripped and used as the API version
 * (default `v1beta`). Requests go to `{url}/v1beta/models/{model}:generateContent` and
 * `{url}/v1beta/models/{model}:streamGenerateContent?alt=sse`. Auth: `x-goog-api-key`.
 *
 * Mapping: system messages -> `systemInstruction`; assistant -> role `model`; consecutive
 * same-role messages merged; params -> generationConfig (temperature, topP, maxOutputTokens,
 * candidateCount, presencePenalty, frequencyPenalty). logitBias is dropped. Only candidate 0
 * is returned. The SDK's automatic continuation (re-requesting with a continuation token) is
 * switched off so one call is exactly one HTTP request; a `CONTINUATION` finish maps to `length`.
 *
 * Tools: definitions -> `tools: [{functionDeclarations}]` (the JSON Schema as
 * `parametersJsonSchema`); choice -> `toolConfig.functionCallingConfig` (auto AUTO, required ANY,
 * none NONE, {name} ANY with `allowedFunctionNames`); `parallel` has no equivalent (dropped). An
 * assistant's calls are `functionCall` parts after its text; tool results are user
 * `functionResponse` parts named after their call (the protocol has no call ids: the id of a
 * result is matched to its call's name), the response the result's JSON object or `{output}`.
 * Answers' `functionCall` parts become tool calls with a made-up id (`call_<random>`) unless the
 * API sent one; a STOP with calls is `tool_calls`. A stream sends whole calls: one piece each.
 */
import type { Content, FunctionCallingConfigMode, GenerateContentConfig, GenerateContentResponse, GoogleGenAI, Part } from '@google/genai';
import { guardedCall, guardedStream, sdkTimeoutMs, usageOf, type StreamState } from './call-control.js';
import { providerBadResponse } from './errors.js';
import type {
  ChatMessage,
  Completion,
  FinishReason,
  ImageContent,
  ProviderAdapter,
  ProviderRequest,
  StreamEvent,
  ToolCall,
  ToolOptions,
  Usage,
} from './types.js';
import {
  ClientCache,
  clientKey,
  isToolMessage,
  joinedText,
  lazy,
  newToolCallId,
  NO_REDIRECT,
  num,
  posInt,
  splitSystemAndGroup,
  toolArguments,
  toolNamesById,
  trimSlashes,
} from './util.js';

/** The SDK loads on the first Gemini call, not at start-up. */
const loadSdk = lazy(() => import('@google/genai'));

export const DEFAULT_GEMINI_BASE_URL = 'https://generativelanguage.googleapis.com';

export function normalizeGeminiFinishReason(reason: string | null | undefined): FinishReason {
  switch (reason) {
    case 'STOP':
      return 'stop';
    case 'MAX_TOKENS':
    case 'CONTINUATION':
      return 'length';
    case 'SAFETY':
    case 'RECITATION':
    case 'BLOCKLIST':
    case 'PROHIBITED_CONTENT':
    case 'SPII':
    case 'IMAGE_SAFETY':
    case 'IMAGE_PROHIBITED_CONTENT':
    case 'IMAGE_RECITATION':
      return 'content_filter';
    default:
      // LANGUAGE, OTHER, MALFORMED_FUNCTION_CALL, UNEXPECTED_TOOL_CALL, TOO_MANY_TOOL_CALLS, ...
      return 'other';
  }
}

export function googleBaseUrl(url: string | null): { baseUrl: string; apiVersion: string | undefined } {
  if (!url) return { baseUrl: DEFAULT_GEMINI_BASE_URL, apiVersion: undefined };
  const trimmed = trimSlashes(url);
  const m = /\/(v1beta|v1alpha|v1)$/.exec(trimmed);
  if (m) return { baseUrl: trimmed.slice(0, -m[0].length), apiVersion: m[1] };
  return { baseUrl: trimmed, apiVersion: undefined };
}

/**
 * fetch used by the SDK: never follows redirects (a redirect could point at an internal
 * address) and, for a model without a key, removes the placeholder key header.
 */
function makeFetch(stripKey: boolean): typeof fetch {
  return (input, init) => {
    if (!stripKey) return fetch(input, { ...init, ...NO_REDIRECT });
    const headers = new Headers(init?.headers);
    headers.delete('x-goog-api-key');
    return fetch(input, { ...init, headers, ...NO_REDIRECT });
  };
}

/** Placeholder so the SDK neither warns nor falls back to env keys / Google default credentials. */
const NO_KEY = 'atrium-no-key';

/** One SDK client per (URL, API version, key fingerprint), built once and shared by concurrent calls. */
const clients = new ClientCache<Promise<GoogleGenAI>>();

/** The shared SDK client of a target (embeddings.ts uses it for `embedContent`). */
export function geminiClientFor(req: Pick<ProviderRequest, 'target'>): Promise<GoogleGenAI> {
  return clientFor(req);
}

function clientFor(req: Pick<ProviderRequest, 'target'>): Promise<GoogleGenAI> {
  const { baseUrl, apiVersion } = googleBaseUrl(req.target.url);
  const key = req.target.apiKey;
  return clients.get(clientKey([baseUrl, apiVersion], key), async () => {
    const { GoogleGenAI } = await loadSdk();
    return new GoogleGenAI({
      // Explicit: never switch to Vertex because of GOOGLE_GENAI_USE_VERTEXAI in the server env.
      vertexai: false,
      // Always a non-empty string: with `undefined` the SDK reads GOOGLE_API_KEY / GEMINI_API_KEY
      // from the env, and with no key at all it would fall back to Google application-default
      // credentials (i.e. send the server's own cloud token to this URL). The placeholder never
      // leaves the process: makeFetch() strips the header.
      apiKey: key || NO_KEY,
      ...(apiVersion ? { apiVersion } : {}),
      httpOptions: { baseUrl, fetch: makeFetch(!key) },
    });
  });
}

/** A tool result as the object `functionResponse.response` must be: its JSON object, else `{output: value}`. */
function responseObject(text: string): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(text);
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : { output: v };
  } catch {
    return { output: text };
  }
}

function partsOf(messages: readonly ChatMessage[], names: Map<string, string>): Part[] {
  if (!messages.some((m) => isToolMessage(m) || (m.images?.length ?? 0) > 0)) return [{ text: joinedText(messages) }];
  const parts: Part[] = [];
  for (const m of messages) {
    if (m.role === 'tool') {
      parts.push({ functionResponse: { name: names.get(m.toolCallId ?? '') ?? '', response: responseObject(m.content) } });
      continue;
    }
    for (const i of m.images ?? []) parts.push({ inlineData: { mimeType: i.mimeType, data: i.data } });
    if (m.content) parts.push({ text: m.content });
    for (const c of m.toolCalls ?? []) parts.push({ functionCall: { name: c.name, args: toolArguments(c.arguments) } });
  }
  return parts;
}

const MODES = { auto: 'AUTO', required: 'ANY', none: 'NONE' } as const;

function applyTools(config: GenerateContentConfig, tools: ToolOptions | undefined): void {
  if (!tools || tools.definitions.length === 0) return;
  config.tools = [
    {
      functionDeclarations: tools.definitions.map((d) => ({
        name: d.name,
        ...(d.description !== undefined ? { description: d.description } : {}),
        ...(d.parameters !== undefined ? { parametersJsonSchema: d.parameters } : {}),
      })),
    },
  ];
  const c = tools.choice;
  if (c === undefined) return;
  const mode = (typeof c === 'string' ? MODES[c] : 'ANY') as FunctionCallingConfigMode;
  config.toolConfig = { functionCallingConfig: { mode, ...(typeof c === 'object' ? { allowedFunctionNames: [c.name] } : {}) } };
}

function buildRequest(req: ProviderRequest, signal: AbortSignal) {
  const { system, turns } = splitSystemAndGroup(req.messages);
  const names = toolNamesById(req.messages);
  const p = req.params;
  const config: GenerateContentConfig = {
    abortSignal: signal,
    httpOptions: { timeout: sdkTimeoutMs(req.timeouts) },
    automaticContinuation: false,
  };
  if (system !== null) config.systemInstruction = system;
  const temperature = num(p.temperature);
  if (temperature !== undefined) config.temperature = temperature;
  const topP = num(p.topP);
  if (topP !== undefined) config.topP = topP;
  const maxTokens = posInt(p.maxTokens);
  if (maxTokens !== undefined) config.maxOutputTokens = maxTokens;
  const n = posInt(p.n);
  if (n !== undefined) config.candidateCount = n;
  const pp = num(p.presencePenalty);
  if (pp !== undefined) config.presencePenalty = pp;
  const fp = num(p.frequencyPenalty);
  if (fp !== undefined) config.frequencyPenalty = fp;
  if (p.stop && p.stop.length > 0) config.stopSequences = p.stop;
  applyTools(config, req.tools);
  const contents: Content[] = turns.map((t) => ({ role: t.role === 'assistant' ? 'model' : 'user', parts: partsOf(t.messages, names) }));
  return { model: req.target.baseModel, contents, config };
}

function usageFrom(u: GenerateContentResponse['usageMetadata']): Usage {
  // Thinking tokens are billed as output.
  const completion = (u?.candidatesTokenCount ?? 0) + (u?.thoughtsTokenCount ?? 0);
  return usageOf(u?.promptTokenCount, completion, u?.totalTokenCount);
}

type Candidate = NonNullable<GenerateContentResponse['candidates']>[number];

function firstCandidate(res: GenerateContentResponse): Candidate | undefined {
  const cands = res.candidates;
  if (!Array.isArray(cands)) return undefined;
  return cands.find((c) => (c.index ?? 0) === 0) ?? cands[0];
}

function textOf(c: Candidate | undefined): string {
  let text = '';
  for (const part of c?.content?.parts ?? []) {
    if (typeof part.text === 'string' && !part.thought) text += part.text;
  }
  return text;
}

function callsOf(c: Candidate | undefined): ToolCall[] {
  const calls: ToolCall[] = [];
  for (const part of c?.content?.parts ?? []) {
    const fc = part.functionCall;
    if (!fc) continue;
    if (typeof fc.name !== 'string' || !fc.name) throw providerBadResponse('a function call without a name');
    calls.push({ id: typeof fc.id === 'string' && fc.id ? fc.id : newToolCallId(), name: fc.name, arguments: JSON.stringify(fc.args ?? {}) });
  }
  return calls;
}

/** Gemini ends a turn of calls with STOP: it is OpenAI's `tool_calls`. */
function finishWithCalls(reason: FinishReason, calls: number): FinishReason {
  return calls > 0 && reason === 'stop' ? 'tool_calls' : reason;
}

export function toGeminiCompletion(res: GenerateContentResponse): Completion {
  if (!res || typeof res !== 'object') throw providerBadResponse();
  const cand = firstCandidate(res);
  if (!cand) {
    if (res.promptFeedback?.blockReason) {
      return { content: '', finishReason: 'content_filter', usage: usageFrom(res.usageMetadata) };
    }
    throw providerBadResponse();
  }
  const toolCalls = callsOf(cand);
  return {
    content: textOf(cand),
    ...(toolCalls.length > 0 ? { toolCalls } : {}),
    finishReason: finishWithCalls(normalizeGeminiFinishReason(cand.finishReason), toolCalls.length),
    usage: usageFrom(res.usageMetadata),
  };
}

/** `calls`: how many calls the stream has sent so far (kept by the caller across chunks). */
export function onGeminiChunk(chunk: GenerateContentResponse, state: StreamState, calls: { count: number } = { count: 0 }): string | null {
  if (!chunk || typeof chunk !== 'object') throw providerBadResponse();
  if (chunk.usageMetadata) state.usage = usageFrom(chunk.usageMetadata); // running total per chunk
  if (chunk.promptFeedback?.blockReason) state.finishReason = 'content_filter';
  const cand = firstCandidate(chunk);
  if (!cand) return null;
  for (const c of callsOf(cand)) state.toolCalls.push({ index: calls.count++, id: c.id, name: c.name, arguments: c.arguments });
  if (cand.finishReason) state.finishReason = finishWithCalls(normalizeGeminiFinishReason(cand.finishReason), calls.count);
  const text = textOf(cand);
  return text || null;
}

/** An image model's answer (images.ts): the conversation asked for text and images, the `inlineData` parts as images. */
export async function geminiImages(req: ProviderRequest): Promise<Completion> {
  return guardedCall(req, async (signal) => {
    const request = buildRequest(req, signal);
    request.config.responseModalities = ['TEXT', 'IMAGE'];
    const res = await (await clientFor(req)).models.generateContent(request);
    const images: ImageContent[] = [];
    for (const part of firstCandidate(res)?.content?.parts ?? []) {
      const d = part.inlineData;
      if (d && typeof d.data === 'string' && d.data) images.push({ mimeType: d.mimeType ?? 'image/png', data: d.data });
    }
    return { ...toGeminiCompletion(res), images };
  });
}

export const googleAdapter: ProviderAdapter = {
  async complete(req: ProviderRequest): Promise<Completion> {
    return guardedCall(req, async (signal) => {
      const res = await (await clientFor(req)).models.generateContent(buildRequest(req, signal));
      return toGeminiCompletion(res);
    });
  },

  stream(req: ProviderRequest): AsyncIterable<StreamEvent> {
    const calls = { count: 0 };
    return guardedStream<GenerateContentResponse>(
      req,
      async (signal) => (await clientFor(req)).models.generateContentStream(buildRequest(req, signal)),
      (chunk, state) => onGeminiChunk(chunk, state, calls),
    );
  },
};
