/**
 * Stand-in model provider: a real HTTP server on 127.0.0.1 (ephemeral port) that speaks the
 * OpenAI, Azure OpenAI, Anthropic and Gemini wire formats closely enough that the real SDKs
 * (and therefore Atrium's adapters) talk to it unchanged.
 *
 *   const standIn = await startStandInProvider();
 *   // model.url for each protocol:
 *   //   OPENAI  / URL   -> standIn.openaiBaseUrl     http://127.0.0.1:PORT/v1
 *   //   OPENAI  / AZURE -> standIn.azureBaseUrl      http://127.0.0.1:PORT          (deployment = baseModel)
 *   //                      standIn.azureV1BaseUrl    http://127.0.0.1:PORT/openai/v1 (Azure "v1" API)
 *   //   ANTHROPIC       -> standIn.anthropicBaseUrl  http://127.0.0.1:PORT
 *   //   GOOGLE          -> standIn.geminiBaseUrl     http://127.0.0.1:PORT
 *
 * Routes:
 *   POST /v1/chat/completions                                        (openai)
 *   POST /openai/deployments/{deployment}/chat/completions?api-version=...   (azure; needs `api-key`)
 *   POST /openai/v1/chat/completions                                 (azure v1; needs `api-key`)
 *   POST /v1/messages                                                (anthropic)
 *   POST /{v1beta|v1|v1alpha}/models/{model}:generateContent         (gemini)
 *   POST /{v1beta|v1|v1alpha}/models/{model}:streamGenerateContent?alt=sse
 *   POST /v1/embeddings, /openai/deployments/{d}/embeddings, /openai/v1/embeddings  (embeddings)
 *   POST /{v1beta|v1|v1alpha}/models/{model}:embedContent | :batchEmbedContents      (gemini embeddings)
 *   POST /v1/rerank  {model, query, documents, top_n} → {results: [{index, relevance_score}]}  (rerank:
 *        score = the share of the query's words of 3+ letters the document holds, + 1 if it holds a
 *        string of the `rerankPrefer` switch)
 *
 * Embeddings are deterministic "concept" vectors: dimension i counts the words of the text that
 * belong to concept group i of the `embedConcepts` switch (case-insensitive, whole words or
 * phrases), plus one last dimension of 0.01 so no vector is zero. So two texts that share no word
 * but name the same concept ("refund" / "money back") are close, and a test decides exactly
 * which chunk a question is near. A requested `dimensions` / `outputDimensionality` pads or cuts
 * the vector to that size.
 *
 * Answers are deterministic: the reply is `Echo: ` + the text of the last user message (or the
 * `reply` switch, or a `whenPrompt` rule's), streamed in word chunks (`"Echo: hi there"` -> `"Echo:"`, `" hi"`, `" there"`).
 * A max-tokens parameter smaller than the number of word chunks truncates the reply to that many
 * chunks and finishes with the protocol's "length" reason.
 * Usage: promptTokens = ceil(chars of all input texts incl. system / 4) (min 1),
 *        completionTokens = number of word chunks sent, total = sum.
 *
 * Context windows (`contextWindow` switch): the stand-in then counts the prompt like a model whose
 * tokenizer is NOT o200k — ceil(chars / 3) + 4 per message, ~1.3× o200k for English — reports
 * that count as promptTokens, and refuses a prompt that does not fit with the protocol's real
 * error: llama.cpp `400 {"error": {"code": 400, "type": "exceed_context_size_error", n_prompt_tokens,
 * n_ctx}}` (prompt > window) or OpenAI `400 {"error": {"code": "context_length_exceeded"}}` (prompt +
 * max tokens > window) for openai/azure; Anthropic "prompt is too long: N tokens > W maximum";
 * Gemini 400 INVALID_ARGUMENT "The input token count (N) exceeds the maximum number of tokens
 * allowed (W)". With the switch set, `GET /props` answers llama.cpp's
 * `{default_generation_settings: {n_ctx}}` and `GET /v1beta/models/{model}` Gemini's
 * `{inputTokenLimit: W − 1024, outputTokenLimit: 1024}` (both 404 otherwise).
 *
 * Tools (`toolCalls` switch): a request that offers tools (OpenAI `tools`, Anthropic `tools`, Gemini
 * `tools[].functionDeclarations`) and does not end in tool results is answered with those calls in
 * the protocol's own form — OpenAI `message.tool_calls` / `finish_reason: tool_calls` (streamed: a
 * delta naming each call, then its arguments in two pieces), Anthropic `tool_use` blocks /
 * `stop_reason: tool_use` (streamed: `content_block_start` + `input_json_delta` pieces, one empty piece
 * for a call with no arguments), Gemini
 * `functionCall` parts with STOP (streamed: one chunk per whole call). Call ids: `call_standin_N_I`
 * (OpenAI), `toolu_standin_N_I` (Anthropic), none (Gemini). A request that ends in tool results
 * (OpenAI `tool` messages, Anthropic `tool_result` blocks, Gemini `functionResponse` parts) is
 * answered `Tool said: <result>` (results joined by ` | `; Gemini's response object as JSON).
 * `refuseTools` answers a request that offers tools with the protocol's refusal (400: Ollama's
 * "does not support tools", Anthropic's invalid_request_error, Gemini's "Function calling is not
 * enabled"). `toolCallsAfterResults` keeps calling after results too (a model that never stops); a
 * request that says to call no tool (tool choice none) is always answered with text. What each
 * request carried is in `requests`.
 *
 * Images (standin-images.ts): a user turn's images are read in each protocol's own form (an answer
 * then ends with ` (saw N image(s))`); `/images/generations` and Gemini's image output answer with
 * the `generatedImage` switch's bytes.
 *
 * Stream "chunks" in the switches below count content chunks only (the protocol preamble, e.g.
 * Anthropic's message_start / content_block_start or OpenAI's role chunk, is always sent first).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { imagesGenerationAnswer, imagesOfRequest, STANDIN_IMAGE, wantsImage } from './standin-images.js';

export type StandInProtocol = 'openai' | 'azure' | 'anthropic' | 'gemini';

export interface RecordedRequest {
  protocol: StandInProtocol;
  method: string;
  /** Path including the query string. */
  path: string;
  headers: http.IncomingHttpHeaders;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  /** the usage the stand-in answered with (chat requests it answered) */
  usage?: { promptTokens: number; completionTokens: number };
}

export interface StandInSwitches {
  /**
   * Answer every request with this HTTP status and a provider-style JSON error body containing
   * {@link LEAKED_SECRET} (a 404 names the model, as the real providers' "model not found" does).
   */
  failStatus: number | null;
  /** `Retry-After` header value sent with a `failStatus` answer. */
  retryAfter: string | null;
  /** Wait this long before sending the response headers. */
  delayMs: number;
  /** Wait this long between stream chunks. */
  chunkDelayMs: number;
  /** Destroy the socket after sending this many content chunks (streaming only). */
  breakStreamAfter: number | null;
  /** Answer 200 with invalid JSON (non-streaming) or garbage SSE (streaming). */
  malformed: boolean;
  /** Send this many content chunks, then go silent (connection kept open) until the client gives up. */
  hangAfterChunks: number | null;
  /** Override the reply text. */
  reply: string | null;
  /**
   * Chat requests whose last user message contains `contains` (the first rule that matches) get
   * `reply` instead, or `failStatus` as a provider error; the others are answered as usual.
   */
  whenPrompt: Array<{ contains: string; reply?: string; failStatus?: number }>;
  /** Enforce a context window with the stand-in's own token count (see the header comment). */
  contextWindow: { tokens: number; style: 'llamacpp' | 'openai' } | null;
  /** openai / azure: answer without usage (like servers that report none). */
  noUsage: boolean;
  /** Ignore the request's max-tokens parameter (like a server that does not honour it): the whole reply is sent. */
  ignoreMaxTokens: boolean;
  /** Report this many times the prompt tokens it would otherwise report (a tokenizer, or a provider, that counts more). */
  promptTokensFactor: number;
  /** Answer only embedding requests with this HTTP status (chat keeps working). */
  failEmbeddings: number | null;
  /** Embeddings: the concept groups that make the dimensions (see the header comment). */
  embedConcepts: string[][];
  /** Rerank: documents holding one of these strings (case-insensitive) score 1 more. */
  rerankPrefer: string[];
  /** Answer only rerank requests with this HTTP status. */
  failRerank: number | null;
  /** Answer a request that offers tools (and does not end in tool results) with these calls (see the header comment). */
  toolCalls: Array<{ name: string; arguments: Record<string, unknown> }> | null;
  /** Refuse a request that offers tools, as a model without tool support does (400). */
  refuseTools: boolean;
  /** Call `toolCalls` again even when the request ends in tool results (a model that never stops calling). */
  toolCallsAfterResults: boolean;
  /** The image an image model answers with (standin-images.ts). */
  generatedImage: Buffer;
  /** `/images/generations`: report this usage (gpt-image style); null: none, like DALL·E. */
  imageUsage: { input: number; output: number } | null;
}

export interface StandInProvider {
  /** http://127.0.0.1:PORT */
  url: string;
  /** http://127.0.0.1:PORT/v1 — OpenAI SDK `baseURL` / Atrium model url (OPENAI, URL). */
  openaiBaseUrl: string;
  /** http://127.0.0.1:PORT — Anthropic SDK `baseURL` / model url (ANTHROPIC). */
  anthropicBaseUrl: string;
  /** http://127.0.0.1:PORT — @google/genai `httpOptions.baseUrl` / model url (GOOGLE). */
  geminiBaseUrl: string;
  /** http://127.0.0.1:PORT — Azure endpoint form; model url (OPENAI, AZURE) with baseModel = deployment. */
  azureBaseUrl: string;
  /** http://127.0.0.1:PORT/openai/v1 — Azure "v1" API form (OPENAI, AZURE). */
  azureV1BaseUrl: string;
  /** Every request received, oldest first (capped at the last 2000). */
  requests: RecordedRequest[];
  /** Requests whose client closed the connection before the response was complete. */
  readonly abortedRequests: number;
  /** Requests currently being answered. */
  readonly inFlight: number;
  /** TCP connections accepted since the last reset (keep-alive clients reuse one). */
  readonly connections: number;
  set(switches: Partial<StandInSwitches>): void;
  /** Clear switches, recorded requests and counters. */
  reset(): void;
  /** Resolves once `abortedRequests >= count` (rejects after `timeoutMs`). */
  waitForAbortedRequests(count: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/** Fake secret embedded in every error body the stand-in sends; it must never reach Atrium's clients. */
export const LEAKED_SECRET = 'sk-LEAKED-SECRET-0123456789';

/** The default concept groups of the stand-in's embeddings. */
export const DEFAULT_CONCEPTS: string[][] = [
  ['refund', 'money back', 'reimburse', 'reimbursement', 'repay'],
  ['holiday', 'vacation', 'leave', 'time off', 'days off'],
  ['password', 'credential', 'sign in', 'login', 'log in'],
  ['invoice', 'bill', 'billing', 'payment'],
];

/** The stand-in's embedding of one text (exported so tests can reason about distances). */
export function standInEmbedding(text: string, concepts: string[][], dims?: number): number[] {
  const lower = ` ${text.toLowerCase().replace(/[^a-z0-9]+/g, ' ')} `;
  const v = concepts.map((group) => group.reduce((n, phrase) => n + (lower.split(` ${phrase.toLowerCase()} `).length - 1), 0));
  v.push(0.01);
  if (dims === undefined) return v;
  return Array.from({ length: dims }, (_, i) => v[i] ?? 0);
}

const DEFAULTS: StandInSwitches = {
  failStatus: null,
  retryAfter: null,
  delayMs: 0,
  chunkDelayMs: 0,
  breakStreamAfter: null,
  malformed: false,
  hangAfterChunks: null,
  reply: null,
  whenPrompt: [],
  contextWindow: null,
  noUsage: false,
  ignoreMaxTokens: false,
  promptTokensFactor: 1,
  failEmbeddings: null,
  embedConcepts: DEFAULT_CONCEPTS,
  rerankPrefer: [],
  failRerank: null,
  toolCalls: null,
  refuseTools: false,
  toolCallsAfterResults: false,
  generatedImage: STANDIN_IMAGE,
  imageUsage: null,
};

/** The stand-in's own prompt count when a context window is enforced: not o200k on purpose. */
export function standInPromptTokens(promptChars: number, messages: number): number {
  return Math.ceil(promptChars / 3) + 4 * messages;
}

const MAX_RECORDED = 2000;

// ---------------------------------------------------------------------------------------
// helpers
// ---------------------------------------------------------------------------------------

interface Route {
  protocol: StandInProtocol;
  /** an embeddings request (`batch`: Gemini batchEmbedContents) */
  embed?: 'one' | 'batch';
  /** a rerank request */
  rerank?: true;
  /** OpenAI's `/images/generations` */
  images?: true;
  /** gemini: streaming is decided by the path */
  geminiStream?: boolean;
  model?: string;
}

const GEMINI_PATH = /^\/(?:v1beta|v1alpha|v1)\/models\/([^:]+):(generateContent|streamGenerateContent)$/;
const AZURE_PATH = /^\/openai\/deployments\/([^/]+)\/chat\/completions$/;
const GEMINI_EMBED_PATH = /^\/(?:v1beta|v1alpha|v1)\/models\/([^:]+):(embedContent|batchEmbedContents)$/;
const AZURE_EMBED_PATH = /^\/openai\/deployments\/([^/]+)\/embeddings$/;

function route(method: string, pathname: string): Route | null {
  if (method !== 'POST') return null;
  if (pathname === '/v1/chat/completions') return { protocol: 'openai' };
  if (pathname === '/v1/images/generations') return { protocol: 'openai', images: true };
  if (pathname === '/openai/v1/images/generations') return { protocol: 'azure', images: true };
  const azi = /^\/openai\/deployments\/([^/]+)\/images\/generations$/.exec(pathname);
  if (azi) return { protocol: 'azure', model: decodeURIComponent(azi[1] ?? ''), images: true };
  if (pathname === '/v1/embeddings') return { protocol: 'openai', embed: 'one' };
  if (pathname === '/v1/rerank') return { protocol: 'openai', rerank: true };
  if (pathname === '/openai/v1/embeddings') return { protocol: 'azure', embed: 'one' };
  const aze = AZURE_EMBED_PATH.exec(pathname);
  if (aze) return { protocol: 'azure', model: decodeURIComponent(aze[1] ?? ''), embed: 'one' };
  const ge = GEMINI_EMBED_PATH.exec(pathname);
  if (ge) return { protocol: 'gemini', model: decodeURIComponent(ge[1] ?? ''), embed: ge[2] === 'batchEmbedContents' ? 'batch' : 'one' };
  if (pathname === '/v1/messages') return { protocol: 'anthropic' };
  if (pathname === '/openai/v1/chat/completions') return { protocol: 'azure' };
  const az = AZURE_PATH.exec(pathname);
  if (az) return { protocol: 'azure', model: decodeURIComponent(az[1] ?? '') };
  const g = GEMINI_PATH.exec(pathname);
  if (g) return { protocol: 'gemini', model: decodeURIComponent(g[1] ?? ''), geminiStream: g[2] === 'streamGenerateContent' };
  return null;
}

type Json = Record<string, unknown>;

function textOfContent(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content.map((p) => (p && typeof p === 'object' && typeof (p as Json).text === 'string' ? ((p as Json).text as string) : '')).join('');
  }
  return '';
}

interface Conversation {
  lastUser: string;
  promptChars: number;
  messages: number;
}

function conversationOf(protocol: StandInProtocol, body: Json): Conversation {
  let lastUser = '';
  let promptChars = 0;
  let count = 0;
  if (protocol === 'gemini') {
    const contents = Array.isArray(body.contents) ? (body.contents as Json[]) : [];
    count = contents.length + (body.systemInstruction ? 1 : 0);
    for (const c of contents) {
      const text = textOfContent(c?.parts);
      promptChars += text.length;
      if (c?.role === undefined || c.role === 'user') lastUser = text;
    }
    const si = body.systemInstruction as Json | string | undefined;
    promptChars += typeof si === 'string' ? si.length : textOfContent((si as Json | undefined)?.parts).length;
  } else {
    const messages = Array.isArray(body.messages) ? (body.messages as Json[]) : [];
    count = messages.length + (protocol === 'anthropic' && body.system ? 1 : 0);
    for (const m of messages) {
      const text = textOfContent(m?.content);
      promptChars += text.length;
      if (m?.role === 'user') lastUser = text;
    }
    if (protocol === 'anthropic') promptChars += textOfContent(body.system).length;
  }
  return { lastUser, promptChars, messages: count };
}

function toolsOffered(protocol: StandInProtocol, body: Json): boolean {
  const tools = Array.isArray(body.tools) ? (body.tools as Json[]) : [];
  if (protocol !== 'gemini') return tools.length > 0;
  return tools.some((t) => Array.isArray(t?.functionDeclarations) && (t.functionDeclarations as unknown[]).length > 0);
}

/** The request tells the model to call no tool (OpenAI `tool_choice: "none"`, Anthropic `{type: "none"}`, Gemini mode NONE). */
function toolChoiceNone(protocol: StandInProtocol, body: Json): boolean {
  if (protocol === 'anthropic') return (body.tool_choice as Json | undefined)?.type === 'none';
  if (protocol === 'gemini') return ((body.toolConfig as Json | undefined)?.functionCallingConfig as Json | undefined)?.mode === 'NONE';
  return body.tool_choice === 'none';
}

/** The tool results the request ends with, or null when its last turn carries none. */
function toolResultsOf(protocol: StandInProtocol, body: Json): string[] | null {
  if (protocol === 'gemini') {
    const last = (Array.isArray(body.contents) ? (body.contents as Json[]) : []).at(-1);
    const parts = Array.isArray(last?.parts) ? (last.parts as Json[]) : [];
    const results = parts.filter((p) => p?.functionResponse).map((p) => JSON.stringify((p.functionResponse as Json).response));
    return results.length > 0 ? results : null;
  }
  const messages = Array.isArray(body.messages) ? (body.messages as Json[]) : [];
  if (protocol === 'anthropic') {
    const content = messages.at(-1)?.content;
    const blocks = Array.isArray(content) ? (content as Json[]).filter((b) => b?.type === 'tool_result') : [];
    return blocks.length > 0 ? blocks.map((b) => textOfContent(b.content)) : null;
  }
  const results: string[] = [];
  for (let i = messages.length - 1; i >= 0 && messages[i]?.role === 'tool'; i--) results.unshift(textOfContent(messages[i]!.content));
  return results.length > 0 ? results : null;
}

function toolsRefusal(protocol: StandInProtocol, model: string): Json {
  switch (protocol) {
    case 'anthropic':
      return { type: 'error', error: { type: 'invalid_request_error', message: `tools: this model does not support tools (${LEAKED_SECRET})` } };
    case 'gemini':
      return { error: { code: 400, message: `Function calling is not enabled for models/${model} (${LEAKED_SECRET})`, status: 'INVALID_ARGUMENT' } };
    default:
      return {
        error: { message: `registry.ollama.ai/library/${model}:latest does not support tools (${LEAKED_SECRET})`, type: 'api_error', param: null, code: null },
      };
  }
}

function maxTokensOf(protocol: StandInProtocol, body: Json): number | null {
  const v =
    protocol === 'gemini'
      ? (body.generationConfig as Json | undefined)?.maxOutputTokens
      : protocol === 'anthropic'
        ? body.max_tokens
        : (body.max_completion_tokens ?? body.max_tokens);
  return typeof v === 'number' && v > 0 ? v : null;
}

function countOf(protocol: StandInProtocol, body: Json): number {
  const v = protocol === 'gemini' ? (body.generationConfig as Json | undefined)?.candidateCount : body.n;
  return typeof v === 'number' && v > 1 ? Math.min(Math.floor(v), 8) : 1;
}

/** Split keeping every character: "Echo: hi there" -> ["Echo:", " hi", " there"]. */
function wordChunks(text: string): string[] {
  const parts = text.split(/(?=\s)/);
  return parts.length > 0 ? parts : [''];
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0 || signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done(): void {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

const ERROR_STATUS_TEXT: Record<number, { anthropic: string; gemini: string; openai: string }> = {
  400: { anthropic: 'invalid_request_error', gemini: 'INVALID_ARGUMENT', openai: 'invalid_request_error' },
  401: { anthropic: 'authentication_error', gemini: 'UNAUTHENTICATED', openai: 'invalid_request_error' },
  403: { anthropic: 'permission_error', gemini: 'PERMISSION_DENIED', openai: 'invalid_request_error' },
  404: { anthropic: 'not_found_error', gemini: 'NOT_FOUND', openai: 'invalid_request_error' },
  429: { anthropic: 'rate_limit_error', gemini: 'RESOURCE_EXHAUSTED', openai: 'rate_limit_exceeded' },
  529: { anthropic: 'overloaded_error', gemini: 'UNAVAILABLE', openai: 'server_error' },
};

function contextErrorBody(protocol: StandInProtocol, style: 'llamacpp' | 'openai', window: number, prompt: number, max: number): Json {
  switch (protocol) {
    case 'anthropic':
      return { type: 'error', error: { type: 'invalid_request_error', message: `prompt is too long: ${prompt} tokens > ${window} maximum` } };
    case 'gemini':
      return {
        error: {
          code: 400,
          message: `The input token count (${prompt}) exceeds the maximum number of tokens allowed (${window}).`,
          status: 'INVALID_ARGUMENT',
        },
      };
    default:
      return style === 'llamacpp'
        ? {
            error: {
              code: 400,
              message: `the request exceeds the available context size, try increasing it (${LEAKED_SECRET})`,
              type: 'exceed_context_size_error',
              n_prompt_tokens: prompt,
              n_ctx: window,
            },
          }
        : {
            error: {
              message: `This model's maximum context length is ${window} tokens. However, you requested ${prompt + max} tokens (${prompt} in the messages, ${max} in the completion). ${LEAKED_SECRET}`,
              type: 'invalid_request_error',
              param: 'messages',
              code: 'context_length_exceeded',
            },
          };
  }
}

function errorBody(protocol: StandInProtocol, status: number): Json {
  const names = ERROR_STATUS_TEXT[status] ?? { anthropic: 'api_error', gemini: 'INTERNAL', openai: 'server_error' };
  const detail = `Stand-in failure ${status}. Upstream debug: key=${LEAKED_SECRET} prompt="secret user prompt"`;
  // A 404 names the model, as every real provider's "model not found" does (a bare 404 is a wrong path).
  const message = status === 404 ? `The model does not exist. ${detail}` : detail;
  switch (protocol) {
    case 'anthropic':
      return { type: 'error', error: { type: names.anthropic, message }, request_id: 'req_standin' };
    case 'gemini':
      return { error: { code: status, message, status: names.gemini } };
    default: {
      const code = status === 401 ? 'invalid_api_key' : status === 404 ? 'model_not_found' : null;
      return { error: { message, type: names.openai, param: null, code } };
    }
  }
}

// ---------------------------------------------------------------------------------------
// server
// ---------------------------------------------------------------------------------------

export async function startStandInProvider(): Promise<StandInProvider> {
  let sw: StandInSwitches = { ...DEFAULTS };
  const requests: RecordedRequest[] = [];
  let aborted = 0;
  let inFlight = 0;
  let connections = 0;
  let seq = 0;
  const abortWaiters = new Set<() => void>();

  const notifyAborted = (): void => {
    aborted++;
    for (const w of abortWaiters) w();
  };

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const rawUrl = req.url ?? '/';
    const qIndex = rawUrl.indexOf('?');
    const pathname = qIndex === -1 ? rawUrl : rawUrl.slice(0, qIndex);
    const query = new URLSearchParams(qIndex === -1 ? '' : rawUrl.slice(qIndex + 1));
    const r = route(req.method ?? 'GET', pathname);

    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    if (req.method === 'GET' && pathname === '/props' && sw.contextWindow) {
      sendJson(res, 200, { default_generation_settings: { n_ctx: sw.contextWindow.tokens }, total_slots: 1, model_path: 'standin.gguf' });
      return;
    }
    const geminiModel = req.method === 'GET' ? /^\/(?:v1beta|v1)\/models\/([^/:]+)$/.exec(pathname) : null;
    if (geminiModel && sw.contextWindow) {
      const name = decodeURIComponent(geminiModel[1] ?? '');
      sendJson(res, 200, { name: `models/${name}`, inputTokenLimit: sw.contextWindow.tokens - 1024, outputTokenLimit: 1024 });
      return;
    }
    if (!r) {
      sendJson(res, 404, { error: { message: `No stand-in route for ${req.method} ${pathname}` } });
      return;
    }
    let body: Json;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Json;
    } catch {
      sendJson(res, 400, errorBody(r.protocol, 400));
      return;
    }
    const recorded: RecordedRequest = { protocol: r.protocol, method: req.method ?? 'POST', path: rawUrl, headers: req.headers, body };
    requests.push(recorded);
    if (requests.length > MAX_RECORDED) requests.splice(0, requests.length - MAX_RECORDED);

    const s = sw; // switches as of the start of this request
    const closed = new AbortController();
    let brokeOnPurpose = false;
    inFlight++;
    res.on('close', () => {
      inFlight--;
      if (!res.writableFinished && !brokeOnPurpose) notifyAborted();
      closed.abort();
    });

    await sleep(s.delayMs, closed.signal);
    if (closed.signal.aborted) return;

    if (r.protocol === 'azure' && !req.headers['api-key']) {
      sendJson(res, 401, errorBody('azure', 401));
      return;
    }
    if (r.protocol === 'azure' && !pathname.startsWith('/openai/v1/') && !query.get('api-version')) {
      sendJson(res, 404, { error: { code: '404', message: 'Resource not found' } });
      return;
    }
    if (r.rerank) {
      if (s.failRerank) sendJson(res, s.failRerank, errorBody(r.protocol, s.failRerank));
      else sendJson(res, 200, rerankAnswer(body, s.rerankPrefer));
      return;
    }
    if (r.embed && s.failEmbeddings) {
      sendJson(res, s.failEmbeddings, errorBody(r.protocol, s.failEmbeddings));
      return;
    }
    if (s.failStatus) {
      sendJson(res, s.failStatus, errorBody(r.protocol, s.failStatus), s.retryAfter ? { 'retry-after': s.retryAfter } : {});
      return;
    }

    if (r.images) {
      sendJson(res, 200, imagesGenerationAnswer(s.generatedImage, s.imageUsage));
      return;
    }
    if (r.embed) {
      if (s.malformed) sendMalformed(res, r.protocol, false);
      else sendJson(res, 200, embedAnswer(r, body, s.embedConcepts));
      return;
    }
    const stream = r.protocol === 'gemini' ? r.geminiStream === true : body.stream === true;
    if (s.malformed) {
      sendMalformed(res, r.protocol, stream);
      return;
    }

    const conv = conversationOf(r.protocol, body);
    const rule = s.whenPrompt.find((w) => conv.lastUser.includes(w.contains));
    if (rule?.failStatus) {
      sendJson(res, rule.failStatus, errorBody(r.protocol, rule.failStatus));
      return;
    }
    const offered = toolsOffered(r.protocol, body);
    const model = r.model ?? (typeof body.model === 'string' ? body.model : 'standin-model');
    if (offered && s.refuseTools) {
      sendJson(res, 400, toolsRefusal(r.protocol, model));
      return;
    }
    const results = toolResultsOf(r.protocol, body);
    const calling = offered && s.toolCalls !== null && (results === null || s.toolCallsAfterResults) && !toolChoiceNone(r.protocol, body);
    const seen = imagesOfRequest(r.protocol, body).length;
    const echo = `Echo: ${conv.lastUser}${seen > 0 ? ` (saw ${seen} image${seen > 1 ? 's' : ''})` : ''}`;
    const text = calling ? '' : (rule?.reply ?? s.reply ?? (results ? `Tool said: ${results.join(' | ')}` : echo));
    let words = calling ? [] : wordChunks(text);
    const max = s.ignoreMaxTokens ? null : maxTokensOf(r.protocol, body);
    const truncated = max !== null && words.length > max;
    if (truncated) words = words.slice(0, max);
    let promptTokens = Math.max(1, Math.ceil(conv.promptChars / 4));
    if (s.contextWindow) {
      promptTokens = standInPromptTokens(conv.promptChars, conv.messages);
      const { tokens: window, style } = s.contextWindow;
      const requested = max ?? 0;
      const refused = style === 'openai' || r.protocol === 'anthropic' ? promptTokens + requested > window : promptTokens > window;
      if (refused) {
        sendJson(res, 400, contextErrorBody(r.protocol, style, window, promptTokens, requested));
        return;
      }
    }
    promptTokens *= s.promptTokensFactor;
    const id = ++seq;
    const toolCalls = calling
      ? s.toolCalls!.map((c, i) => ({ id: r.protocol === 'anthropic' ? `toolu_standin_${id}_${i}` : `call_standin_${id}_${i}`, ...c }))
      : undefined;
    const completionTokens = toolCalls ? toolCalls.reduce((n, c) => n + Math.ceil(JSON.stringify(c.arguments).length / 4) + 1, 0) : words.length;
    const answer: Answer = {
      id,
      ...(toolCalls ? { toolCalls } : {}),
      model,
      words,
      content: words.join(''),
      truncated,
      promptTokens,
      completionTokens,
      n: countOf(r.protocol, body),
      noUsage: s.noUsage,
    };
    recorded.usage = { promptTokens, completionTokens };

    if (!stream) {
      const json = jsonAnswer(r.protocol, answer);
      if (r.protocol === 'gemini' && wantsImage(body)) {
        const first = (json.candidates as Array<{ content: { parts: Json[] } }>)[0]!;
        first.content.parts.push({ inlineData: { mimeType: 'image/png', data: s.generatedImage.toString('base64') } });
      }
      sendJson(res, 200, json);
      return;
    }

    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const events = sseEvents(r.protocol, answer, body);
    for (const ev of events) {
      if (closed.signal.aborted) return;
      if (ev.contentIndex !== undefined) {
        if (s.breakStreamAfter !== null && ev.contentIndex >= s.breakStreamAfter) {
          brokeOnPurpose = true;
          const socket = res.socket;
          // Let what was already written reach the client, then drop the connection mid-body.
          if (socket) await new Promise<void>((resolve) => socket.write('', () => resolve()));
          socket?.destroy();
          return;
        }
        if (s.hangAfterChunks !== null && ev.contentIndex >= s.hangAfterChunks) return; // silent until the client leaves
        if (ev.contentIndex > 0) await sleep(s.chunkDelayMs, closed.signal);
        if (closed.signal.aborted) return;
      }
      res.write(ev.data);
    }
    res.end();
  }

  const server = http.createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) sendJson(res, 500, { error: { message: 'stand-in crashed' } });
      else res.destroy();
    });
  });
  server.keepAliveTimeout = 10_000;
  server.on('connection', () => {
    connections++;
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;

  return {
    url,
    openaiBaseUrl: `${url}/v1`,
    anthropicBaseUrl: url,
    geminiBaseUrl: url,
    azureBaseUrl: url,
    azureV1BaseUrl: `${url}/openai/v1`,
    requests,
    get abortedRequests() {
      return aborted;
    },
    get inFlight() {
      return inFlight;
    },
    get connections() {
      return connections;
    },
    set(switches) {
      sw = { ...sw, ...switches };
    },
    reset() {
      sw = { ...DEFAULTS };
      requests.length = 0;
      aborted = 0;
      connections = 0;
    },
    waitForAbortedRequests(count, timeoutMs = 2000) {
      if (aborted >= count) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          abortWaiters.delete(check);
          reject(new Error(`stand-in saw ${aborted} aborted request(s), expected ${count}`));
        }, timeoutMs);
        function check(): void {
          if (aborted >= count) {
            clearTimeout(timer);
            abortWaiters.delete(check);
            resolve();
          }
        }
        abortWaiters.add(check);
      });
    },
    close() {
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

// ---------------------------------------------------------------------------------------
// wire formats
// ---------------------------------------------------------------------------------------

interface Answer {
  id: number;
  /** answer with these calls instead of text */
  toolCalls?: Array<{ id: string; name: string; arguments: Record<string, unknown> }>;
  model: string;
  words: string[];
  content: string;
  truncated: boolean;
  promptTokens: number;
  completionTokens: number;
  n: number;
  noUsage: boolean;
}

function sendJson(res: http.ServerResponse, status: number, body: unknown, headers: http.OutgoingHttpHeaders = {}): void {
  const data = JSON.stringify(body);
  res.writeHead(status, { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) });
  res.end(data);
}

/** The stand-in's rerank: the share of the query's words (3+ letters) a document holds, + 1 for a preferred string; best first, top_n of them. */
function rerankAnswer(body: Json, prefer: string[]): Json {
  const words = (t: string) => new Set(t.toLowerCase().match(/[a-z0-9]{3,}/g) ?? []);
  const query = [...words(String(body.query ?? ''))];
  const docs = Array.isArray(body.documents) ? (body.documents as unknown[]).map((d) => String(d)) : [];
  const scored = docs.map((d, index) => {
    const has = words(d);
    const overlap = query.length === 0 ? 0 : query.filter((w) => has.has(w)).length / query.length;
    const bonus = prefer.some((p) => d.toLowerCase().includes(p.toLowerCase())) ? 1 : 0;
    return { index, relevance_score: overlap + bonus };
  });
  scored.sort((a, b) => b.relevance_score - a.relevance_score || a.index - b.index);
  const n = typeof body.top_n === 'number' ? body.top_n : scored.length;
  return { model: body.model ?? 'standin-rerank', results: scored.slice(0, n) };
}

function embedAnswer(r: Route, body: Json, concepts: string[][]): Json {
  if (r.protocol === 'gemini') {
    const one = (req: Json) => {
      const dims = typeof req.outputDimensionality === 'number' ? req.outputDimensionality : undefined;
      return { values: standInEmbedding(textOfContent((req.content as Json | undefined)?.parts), concepts, dims) };
    };
    if (r.embed === 'batch') return { embeddings: (Array.isArray(body.requests) ? (body.requests as Json[]) : []).map(one) };
    return { embedding: one(body) };
  }
  const input = body.input;
  const texts = Array.isArray(input) ? input.map((t) => String(t)) : [String(input ?? '')];
  const dims = typeof body.dimensions === 'number' ? body.dimensions : undefined;
  const tokens = texts.reduce((n, t) => n + Math.max(1, Math.ceil(t.length / 4)), 0);
  return {
    object: 'list',
    data: texts.map((t, index) => ({ object: 'embedding', index, embedding: standInEmbedding(t, concepts, dims) })),
    model: r.model ?? body.model ?? 'standin-embedding',
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  };
}

function sendMalformed(res: http.ServerResponse, protocol: StandInProtocol, stream: boolean): void {
  if (!stream) {
    const data = '{"choices": [{"message": {"content": "half an answer';
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) });
    res.end(data);
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  if (protocol === 'anthropic') res.end('event: message_start\ndata: {"type": "message_start", "message": {oops\n\n');
  else if (protocol === 'gemini') res.end('data: {"candidates": [oops\r\n\r\n');
  else res.end('data: {"id": "chatcmpl-standin", "choices": [oops\n\n');
}

function jsonAnswer(protocol: StandInProtocol, a: Answer): Json {
  const created = Math.floor(Date.now() / 1000);
  switch (protocol) {
    case 'anthropic':
      return {
        id: `msg_standin_${a.id}`,
        type: 'message',
        role: 'assistant',
        model: a.model,
        content: a.toolCalls ? a.toolCalls.map((c) => ({ type: 'tool_use', id: c.id, name: c.name, input: c.arguments })) : [{ type: 'text', text: a.content }],
        stop_reason: a.toolCalls ? 'tool_use' : a.truncated ? 'max_tokens' : 'end_turn',
        stop_sequence: null,
        usage: {
          input_tokens: a.promptTokens,
          output_tokens: a.completionTokens,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 0,
        },
      };
    case 'gemini':
      return {
        candidates: Array.from({ length: a.n }, (_, i) => ({
          content: {
            parts:
              i === 0 && a.toolCalls
                ? a.toolCalls.map((c) => ({ functionCall: { name: c.name, args: c.arguments } }))
                : [{ text: i === 0 ? a.content : `Candidate ${i}` }],
            role: 'model',
          },
          finishReason: a.truncated ? 'MAX_TOKENS' : 'STOP',
          index: i,
        })),
        usageMetadata: {
          promptTokenCount: a.promptTokens,
          candidatesTokenCount: a.completionTokens,
          totalTokenCount: a.promptTokens + a.completionTokens,
        },
        modelVersion: a.model,
        responseId: `standin-${a.id}`,
      };
    default:
      return {
        id: `chatcmpl-standin-${a.id}`,
        object: 'chat.completion',
        created,
        model: a.model,
        choices: Array.from({ length: a.n }, (_, i) => ({
          index: i,
          message:
            i === 0 && a.toolCalls
              ? {
                  role: 'assistant',
                  content: null,
                  refusal: null,
                  tool_calls: a.toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.arguments) } })),
                }
              : { role: 'assistant', content: i === 0 ? a.content : `Choice ${i}`, refusal: null },
          logprobs: null,
          finish_reason: i === 0 && a.toolCalls ? 'tool_calls' : a.truncated ? 'length' : 'stop',
        })),
        usage: a.noUsage
          ? null
          : {
              prompt_tokens: a.promptTokens,
              completion_tokens: a.completionTokens,
              total_tokens: a.promptTokens + a.completionTokens,
            },
        system_fingerprint: null,
      };
  }
}

interface SseEvent {
  data: string;
  /** Set on content chunks: 0-based index among content chunks. */
  contentIndex?: number;
}

function sseEvents(protocol: StandInProtocol, a: Answer, body: Json): SseEvent[] {
  const out: SseEvent[] = [];
  if (protocol === 'anthropic') {
    const ev = (type: string, payload: Json, contentIndex?: number): void => {
      out.push({ data: `event: ${type}\ndata: ${JSON.stringify({ type, ...payload })}\n\n`, contentIndex });
    };
    ev('message_start', {
      message: {
        id: `msg_standin_${a.id}`,
        type: 'message',
        role: 'assistant',
        model: a.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: a.promptTokens, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
      },
    });
    if (a.toolCalls) {
      a.toolCalls.forEach((c, i) => {
        ev('content_block_start', { index: i, content_block: { type: 'tool_use', id: c.id, name: c.name, input: {} } });
        // as the Messages API does, a call with no input gets one empty piece
        const pieces = Object.keys(c.arguments).length === 0 ? [''] : halves(JSON.stringify(c.arguments));
        for (const piece of pieces) ev('content_block_delta', { index: i, delta: { type: 'input_json_delta', partial_json: piece } });
        ev('content_block_stop', { index: i });
      });
    } else {
      ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
      ev('ping', {});
      a.words.forEach((w, i) => ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: w } }, i));
      ev('content_block_stop', { index: 0 });
    }
    ev('message_delta', {
      delta: { stop_reason: a.toolCalls ? 'tool_use' : a.truncated ? 'max_tokens' : 'end_turn', stop_sequence: null },
      usage: { output_tokens: a.completionTokens },
    });
    ev('message_stop', {});
    return out;
  }

  if (protocol === 'gemini' && a.toolCalls) {
    const calls = a.toolCalls;
    calls.forEach((c, i) => {
      const final = i === calls.length - 1;
      const chunk = {
        candidates: [
          { content: { parts: [{ functionCall: { name: c.name, args: c.arguments } }], role: 'model' }, ...(final ? { finishReason: 'STOP' } : {}), index: 0 },
        ],
        usageMetadata: final
          ? { promptTokenCount: a.promptTokens, candidatesTokenCount: a.completionTokens, totalTokenCount: a.promptTokens + a.completionTokens }
          : { promptTokenCount: a.promptTokens, totalTokenCount: a.promptTokens },
        modelVersion: a.model,
        responseId: `standin-${a.id}`,
      };
      out.push({ data: `data: ${JSON.stringify(chunk)}\r\n\r\n` });
    });
    return out;
  }

  if (protocol === 'gemini') {
    const last = a.words.length - 1;
    a.words.forEach((w, i) => {
      const final = i === last;
      const candidates = Array.from({ length: a.n }, (_, c) => ({
        content: { parts: [{ text: c === 0 ? w : 'x' }], role: 'model' },
        ...(final ? { finishReason: a.truncated ? 'MAX_TOKENS' : 'STOP' } : {}),
        index: c,
      }));
      const usageMetadata = final
        ? {
            promptTokenCount: a.promptTokens,
            candidatesTokenCount: a.completionTokens,
            totalTokenCount: a.promptTokens + a.completionTokens,
          }
        : { promptTokenCount: a.promptTokens, totalTokenCount: a.promptTokens };
      const chunk = { candidates, usageMetadata, modelVersion: a.model, responseId: `standin-${a.id}` };
      out.push({ data: `data: ${JSON.stringify(chunk)}\r\n\r\n`, contentIndex: i });
    });
    return out;
  }

  // openai / azure
  const includeUsage = (body.stream_options as Json | undefined)?.include_usage === true && !a.noUsage;
  const created = Math.floor(Date.now() / 1000);
  const base = { id: `chatcmpl-standin-${a.id}`, object: 'chat.completion.chunk', created, model: a.model, system_fingerprint: null };
  const chunk = (choices: Json[], contentIndex?: number, usage?: Json): void => {
    const payload = { ...base, choices, ...(includeUsage ? { usage: usage ?? null } : {}) };
    out.push({ data: `data: ${JSON.stringify(payload)}\n\n`, contentIndex });
  };
  chunk([{ index: 0, delta: { role: 'assistant', content: '', refusal: null }, logprobs: null, finish_reason: null }]);
  a.words.forEach((w, i) => {
    const choices: Json[] = [{ index: 0, delta: { content: w }, logprobs: null, finish_reason: null }];
    for (let c = 1; c < a.n; c++) choices.push({ index: c, delta: { content: 'x' }, logprobs: null, finish_reason: null });
    chunk(choices, i);
  });
  a.toolCalls?.forEach((c, i) => {
    const call = (delta: Json): void => chunk([{ index: 0, delta: { tool_calls: [{ index: i, ...delta }] }, logprobs: null, finish_reason: null }]);
    call({ id: c.id, type: 'function', function: { name: c.name, arguments: '' } });
    for (const piece of halves(JSON.stringify(c.arguments))) call({ function: { arguments: piece } });
  });
  const finish = a.toolCalls ? 'tool_calls' : a.truncated ? 'length' : 'stop';
  chunk(Array.from({ length: a.n }, (_, c) => ({ index: c, delta: {}, logprobs: null, finish_reason: finish })));
  if (includeUsage) {
    chunk([], undefined, {
      prompt_tokens: a.promptTokens,
      completion_tokens: a.completionTokens,
      total_tokens: a.promptTokens + a.completionTokens,
    });
  }
  out.push({ data: 'data: [DONE]\n\n' });
  return out;
}

/** A text in two pieces (how the stand-in streams a call's arguments). */
function halves(text: string): string[] {
  const mid = Math.ceil(text.length / 2);
  return [text.slice(0, mid), text.slice(mid)].filter((p) => p.length > 0);
}
