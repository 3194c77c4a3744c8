/**
 * Model-provider adapters: one small interface ({@link ProviderAdapter}), one adapter per wire
 * protocol, built on the maintained SDKs (`openai`, `@anthropic-ai/sdk`, `@google/genai`).
 *
 * Parameter mapping (— = dropped, the protocol has no equivalent):
 *
 * | GenerationParams  | OPENAI / AZURE                                   | ANTHROPIC                          | GOOGLE (generationConfig) |
 * |-------------------|--------------------------------------------------|------------------------------------|---------------------------|
 * | temperature       | temperature                                      | — (*)                              | temperature               |
 * | topP              | top_p                                            | — (*)                              | topP                      |
 * | maxTokens         | max_completion_tokens (api.openai.com, Azure)    | max_tokens (required, default 1024)| maxOutputTokens           |
 * |                   | max_tokens (other OpenAI-compatible servers)     |                                    |                           |
 * | n                 | n (only choice 0 is returned)                    | —                                  | candidateCount (only candidate 0 returned) |
 * | frequencyPenalty  | frequency_penalty                                | —                                  | frequencyPenalty          |
 * | presencePenalty   | presence_penalty                                 | —                                  | presencePenalty           |
 * | logitBias         | logit_bias                                       | —                                  | —                         |
 *
 * (*) `@anthropic-ai/sdk` 1.x pins `anthropic-version: 2026-10-21`; that Messages API version has
 *     no sampling parameters (temperature / top_p / top_k were removed from the SDK's types).
 *
 * Messages: OPENAI keeps them as-is (system messages inline). ANTHROPIC moves system messages to
 * the top-level `system` field; GOOGLE to `systemInstruction`; both merge consecutive same-role
 * messages (blank-line separated). GOOGLE sends assistant turns with role `model`.
 *
 * Tools (`req.tools`, assistant `toolCalls`, `tool` messages; answers' `toolCalls` / streamed
 * `tool_call` pieces) are one internal form each adapter maps to its protocol (README "Tools").
 *
 * Finish reasons are normalised to `stop | length | content_filter | tool_calls | other`.
 * Usage is normalised to {promptTokens, completionTokens, totalTokens}; when the provider
 * reports nothing the adapter returns zeros and the caller may estimate.
 *
 * All adapters: `maxRetries: 0` / no SDK retries, no redirects followed, SDK logging off, and
 * credentials ONLY from `target.apiKey` (the SDKs' env / profile / cloud-default credential
 * fallbacks are disabled). Errors are always {@link ProviderError}s with generic messages.
 * Timeouts: see {@link ProviderTimeouts}. The URL forms each adapter expects are documented in
 * src/providers/README.md and at the top of openai.ts / anthropic.ts / google.ts.
 * SSRF: call {@link assertProviderUrlAllowed} before each call (the adapters do not resolve DNS).
 *
 * Start-up: nothing here imports an SDK. Each adapter imports its SDK on its first call, and
 * classify.ts recognises the SDKs' error classes by name.
 */
import { anthropicAdapter } from './anthropic.js';
import { googleAdapter } from './google.js';
import { azureOpenaiAdapter, openaiAdapter } from './openai.js';
import type { ApiBase, ConnectionType, ProviderAdapter } from './types.js';
import { observedAdapter } from '../observability/provider-calls.js';

export type * from './types.js';
export {
  ProviderError,
  PROVIDER_ERROR_CODES,
  describeForLog,
  httpStatusFor,
  isFinalRefusal,
  withoutUpstreamDetail,
  type ProviderErrorCode,
  type ProviderErrorKind,
} from './errors.js';
export { classifyProviderError, upstreamInfo } from './classify.js';
export {
  ProviderUrlError,
  assertProviderUrlAllowed,
  checkProviderUrlSyntax,
  classifyIp,
  isIpAllowed,
  type IpClass,
  type ProviderUrlErrorReason,
  type ProviderUrlPolicy,
} from './url-guard.js';
export { closeProviderConnections } from './transport.js';
export { embed, supportsEmbeddings, unitVector, type EmbedRequest } from './embeddings.js';
export { rerank, rerankUrl, supportsRerank, type RerankRequest, type RerankResult } from './rerank.js';
export { DEFAULT_OPENAI_BASE_URL, DEFAULT_AZURE_API_VERSION, parseAzureUrl } from './openai.js';
export { DEFAULT_ANTHROPIC_BASE_URL, DEFAULT_ANTHROPIC_MAX_TOKENS } from './anthropic.js';
export { DEFAULT_GEMINI_BASE_URL } from './google.js';
export { openaiAdapter, azureOpenaiAdapter, anthropicAdapter, googleAdapter };

/** Whether an (apiBase, connectionType) pair is supported: AZURE only exists for OPENAI. */
export function isSupportedConnection(apiBase: ApiBase, connectionType: ConnectionType): boolean {
  return connectionType === 'URL' || (connectionType === 'AZURE' && apiBase === 'OPENAI');
}

/**
 * The adapter for a model's protocol and connection type. Throws a TypeError for an unsupported
 * pair (validate with {@link isSupportedConnection} when a model is saved).
 */
export function getAdapter(apiBase: ApiBase, connectionType: ConnectionType = 'URL'): ProviderAdapter {
  return observedAdapter(pickAdapter(apiBase, connectionType));
}

function pickAdapter(apiBase: ApiBase, connectionType: ConnectionType): ProviderAdapter {
  if (!isSupportedConnection(apiBase, connectionType)) {
    throw new TypeError(`Connection type ${connectionType} is not supported for ${apiBase} models`);
  }
  switch (apiBase) {
    case 'OPENAI':
      return connectionType === 'AZURE' ? azureOpenaiAdapter : openaiAdapter;
    case 'ANTHROPIC':
      return anthropicAdapter;
    case 'GOOGLE':
      return googleAdapter;
    default: {
      const never: never = apiBase;
      throw new TypeError(`Unknown apiBase: ${String(never)}`);
    }
  }
}
