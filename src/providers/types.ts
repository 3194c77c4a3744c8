/**
 * Provider-neutral types shared by every model-provider adapter.
 *
 * The adapters in this folder translate these shapes to and from one wire
 * protocol each (OpenAI chat completions, Anthropic messages, Gemini
 * generateContent) using the maintained SDKs.
 */

export type ApiBase = 'OPENAI' | 'ANTHROPIC' | 'GOOGLE';
export type ConnectionType = 'URL' | 'AZURE';

export interface ProviderTarget {
  apiBase: ApiBase;
  connectionType: ConnectionType;
  /** Base URL; `null` means the provider's public default. See src/providers/README.md for the accepted forms. */
  url: string | null;
  /** `null` means "send no credential" (e.g. a local gateway). The SDKs are never allowed to fall back to env/disk credentials. */
  apiKey: string | null;
  /** Model id (OpenAI / Anthropic / Gemini) or, for Azure, the deployment name. */
  baseModel: string;
}

/** A function call the model asked for. `arguments` is JSON text, as the model wrote it (OpenAI's form). */
export interface ToolCall {
  /** OpenAI / Anthropic ids as sent; Gemini has none, so the adapter makes one (`call_<random>`). */
  id: string;
  name: string;
  arguments: string;
}

/**
 * An image in a message (a user's, sent to a vision model; or a generated one, answered by an
 * image model). The bytes have been read and checked before they get here (src/media/).
 */
export interface ImageContent {
  mimeType: string;
  /** the bytes, base64 (standard alphabet, padded) */
  data: string;
  // Set by the chat once the image was read (modules/chat/images.ts):
  /** the stored image's id */
  id?: string;
  width?: number;
  height?: number;
  /** what it counts for in the prompt by the turn's protocol (media/tokens.ts) */
  tokens?: number;
}

/**
 * One message of the conversation. `tool` messages carry the result of an earlier assistant
 * message's call (`toolCallId`); an assistant message may carry `toolCalls` (with or without text).
 */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  /** assistant only: the calls the model made in this turn */
  toolCalls?: ToolCall[];
  /** tool only: the id of the call this message answers */
  toolCallId?: string;
  /** user only: images sent with the text (each protocol's own form: README "Images") */
  images?: ImageContent[];
}

/** A function the model may call. `parameters` is a JSON Schema of its arguments object. */
export interface ToolDefinition {
  name: string;
  description?: string;
  parameters?: Record<string, unknown>;
  /** OpenAI's strict schema adherence; the other protocols have no such switch (dropped there) */
  strict?: boolean;
}

/** auto: the model decides; none: no call; required: at least one call; `{name}`: that function. */
export type ToolChoice = 'auto' | 'none' | 'required' | { name: string };

/** The tools offered on a call, in one form for every protocol (README "Tools"). */
export interface ToolOptions {
  definitions: ToolDefinition[];
  /** absent: the provider's default (auto) */
  choice?: ToolChoice;
  /** false: at most one call per answer, where the protocol can say so (absent: the provider's default) */
  parallel?: boolean;
}

export interface GenerationParams {
  temperature?: number | null;
  maxTokens?: number | null;
  topP?: number | null;
  n?: number | null;
  frequencyPenalty?: number | null;
  presencePenalty?: number | null;
  logitBias?: Record<string, number> | null;
  /** stop sequences (OpenAI `stop`, Anthropic `stop_sequences`, Gemini `stopSequences`) */
  stop?: string[] | null;
}

/**
 * All values in milliseconds. A value that is not a finite number > 0 disables that timer.
 *
 * - `connectMs`: deadline for the upstream to start answering (response headers) on a
 *   *streaming* call. Non-streaming calls only get headers together with the whole answer,
 *   so for them `totalMs` is the governing deadline. (Node's fetch additionally fails a TCP
 *   connect that takes more than 10 s.)
 * - `totalMs`: deadline for the whole call, including reading the full stream.
 * - `idleMs`: maximum gap between two stream chunks (streaming only).
 */
export interface ProviderTimeouts {
  connectMs: number;
  totalMs: number;
  idleMs: number;
}

export interface ProviderRequest {
  target: ProviderTarget;
  messages: ChatMessage[];
  params: GenerationParams;
  /** Functions the model may call; absent: none offered. */
  tools?: ToolOptions;
  /** Aborting it cancels the upstream HTTP call; the adapter then throws `ProviderError('aborted')`. */
  signal?: AbortSignal;
  timeouts: ProviderTimeouts;
}

/** Token counts as reported by the provider. All zeros when the provider reported none: the caller may estimate. */
export interface Usage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
}

/** Normalised finish reasons. */
export type FinishReason = 'stop' | 'length' | 'content_filter' | 'tool_calls' | 'other';

export interface Completion {
  content: string;
  /** an image model's answer (providers/images.ts): the images it made, not yet read or checked */
  images?: ImageContent[];
  /** The calls the model made (finish reason `tool_calls`); absent or empty: none. */
  toolCalls?: ToolCall[];
  /** One of {@link FinishReason}. */
  finishReason: string;
  usage: Usage;
}

/**
 * A piece of a streamed call: the first piece of each call (by `index`, 0-based in the answer)
 * carries its `id` and `name`; every piece may add to its `arguments` (JSON text, in order).
 */
export interface ToolCallDelta {
  index: number;
  id?: string;
  name?: string;
  arguments: string;
}

export type StreamEvent =
  { type: 'delta'; content: string } | { type: 'tool_call'; call: ToolCallDelta } | { type: 'done'; finishReason: string; usage: Usage };

export interface ProviderAdapter {
  complete(req: ProviderRequest): Promise<Completion>;
  stream(req: ProviderRequest): AsyncIterable<StreamEvent>;
}
