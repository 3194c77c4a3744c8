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

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
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
  /** One of {@link FinishReason}. */
  finishReason: string;
  usage: Usage;
}

export type StreamEvent = { type: 'delta'; content: string } | { type: 'done'; finishReason: string; usage: Usage };

export interface ProviderAdapter {
  complete(req: ProviderRequest): Promise<Completion>;
  stream(req: ProviderRequest): AsyncIterable<StreamEvent>;
}
