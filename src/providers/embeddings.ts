/**
 * Embedding adapters: texts → vectors, one per wire protocol, on the same SDK clients, timeouts,
 * cancellation and failure classification as the chat adapters.
 *
 * - OPENAI (URL): `POST {url}/embeddings` (OpenAI and every compatible server: vLLM, Ollama,
 *   llama.cpp, LM Studio, …) through the `openai` SDK, `encoding_format: "float"`.
 * - OPENAI (AZURE): the same on the deployment (`…/openai/deployments/{baseModel}/embeddings`).
 * - GOOGLE: `@google/genai` `models.embedContent`, which the Gemini API serves as
 *   `{model}:batchEmbedContents` (one HTTP request for many texts).
 * - ANTHROPIC has no embeddings API: a model of that protocol cannot be an embedding model.
 *
 * `dimensions` is sent only when set (OpenAI `dimensions`, Gemini `outputDimensionality`): most
 * models have one size and some servers refuse the field. Vectors come back in input order; an
 * answer with the wrong count, a non-numeric value or vectors of unequal length is a bad response.
 */
import { guardedCall } from './call-control.js';
import { providerBadResponse } from './errors.js';
import { geminiClientFor } from './google.js';
import { openaiClientFor } from './openai.js';
import type { ApiBase, ProviderTarget, ProviderTimeouts } from './types.js';

export interface EmbedRequest {
  target: ProviderTarget;
  texts: string[];
  /** ask the model for vectors of this size (only when the model supports choosing) */
  dimensions?: number | null;
  timeouts: ProviderTimeouts;
  signal?: AbortSignal;
}

/** Whether a protocol has an embeddings API. */
export function supportsEmbeddings(apiBase: ApiBase): boolean {
  return apiBase === 'OPENAI' || apiBase === 'GOOGLE';
}

function checked(vectors: unknown[], count: number): number[][] {
  if (vectors.length !== count) throw providerBadResponse();
  const out: number[][] = [];
  let dims = -1;
  for (const v of vectors) {
    if (!Array.isArray(v) || v.length === 0 || (dims !== -1 && v.length !== dims)) throw providerBadResponse();
    for (const x of v) if (typeof x !== 'number' || !Number.isFinite(x)) throw providerBadResponse();
    dims = v.length;
    out.push(v as number[]);
  }
  return out;
}

/** The vectors of `texts`, in order. Throws a ProviderError (errors.ts) on any failure. */
export async function embed(req: EmbedRequest): Promise<number[][]> {
  if (req.texts.length === 0) return [];
  const callReq = { target: req.target, messages: [], params: {}, timeouts: req.timeouts, ...(req.signal ? { signal: req.signal } : {}) };
  const dims = req.dimensions ?? undefined;
  switch (req.target.apiBase) {
    case 'OPENAI':
      return guardedCall(callReq, async (signal) => {
        const client = await openaiClientFor(req.target);
        const res = await client.embeddings.create(
          { model: req.target.baseModel, input: req.texts, encoding_format: 'float', ...(dims ? { dimensions: dims } : {}) },
          { signal, maxRetries: 0 },
        );
        const data = (res as { data?: unknown } | null)?.data;
        if (!Array.isArray(data)) throw providerBadResponse();
        // Servers answer in input order, but `index` says so explicitly.
        const sorted = [...(data as Array<{ index?: number; embedding?: unknown }>)].sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
        return checked(
          sorted.map((d) => d.embedding),
          req.texts.length,
        );
      });
    case 'GOOGLE':
      return guardedCall(callReq, async (signal) => {
        const client = await geminiClientFor({ target: req.target });
        const res = await client.models.embedContent({
          model: req.target.baseModel,
          contents: req.texts.map((text) => ({ role: 'user', parts: [{ text }] })),
          config: { abortSignal: signal, ...(dims ? { outputDimensionality: dims } : {}) },
        });
        const list = (res as { embeddings?: unknown } | null)?.embeddings;
        if (!Array.isArray(list)) throw providerBadResponse();
        return checked(
          list.map((e: { values?: unknown }) => e?.values),
          req.texts.length,
        );
      });
    case 'ANTHROPIC':
      throw new TypeError('ANTHROPIC has no embeddings API');
    default: {
      const never: never = req.target.apiBase;
      throw new TypeError(`Unknown apiBase: ${String(never)}`);
    }
  }
}

/** The vector scaled to length 1 (cosine similarity of unit vectors is their dot product); null for a zero vector. */
export function unitVector(v: readonly number[]): number[] | null {
  let sum = 0;
  for (const x of v) sum += x * x;
  if (sum === 0) return null;
  const inv = 1 / Math.sqrt(sum);
  return v.map((x) => x * inv);
}
