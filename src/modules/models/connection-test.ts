import { classifyProviderError, embed, getAdapter, httpStatusFor, rerank } from '../../providers/index.js';
import type { ProviderTarget } from '../../providers/types.js';
import type { ModelRow } from './repo.js';
import type { ConnectionTestT } from './schema.js';

/** A connection test asks for a one-line answer and waits at most this long (a person is watching). */
const CONNECTION_TEST_MAX_TOKENS = 64;
const CONNECTION_TEST_TIMEOUTS = { connectMs: 15_000, totalMs: 30_000, idleMs: 15_000 };

/**
 * The provider call of a model's connection test (`ModelsService.testConnection` checks the caller
 * and resolves the target first): a chat model answers `prompt`, an embedding model embeds it, a
 * rerank model ranks it against two passages.
 * A failure is the test's answer, with the upstream status and code, never thrown.
 */
export async function connectionTestCall(
  row: Pick<ModelRow, 'kind' | 'embeddingDimensions'>,
  target: ProviderTarget,
  prompt: string,
  elapsed: () => number,
): Promise<ConnectionTestT> {
  try {
    // An embedding model is tested where it is used: its embeddings endpoint (it may have no chat one at all).
    if (row.kind === 'embedding') {
      const [vector] = await embed({ target, texts: [prompt], dimensions: row.embeddingDimensions, timeouts: CONNECTION_TEST_TIMEOUTS });
      const dimensions = vector?.length ?? 0;
      if (row.embeddingDimensions != null && dimensions !== row.embeddingDimensions) {
        const detail = `The model answered a vector of ${dimensions} dimensions, but it is set to ${row.embeddingDimensions}: correct embeddingDimensions or clear it`;
        return testFailure(elapsed(), { status: 502, code: 'provider_bad_response', detail }, dimensions);
      }
      return {
        ok: true,
        content: `Embedded the prompt as a vector of ${dimensions} dimensions`,
        finishReason: null,
        dimensions,
        latencyMs: elapsed(),
        error: null,
      };
    }
    // A rerank model: the prompt ranked against a passage that repeats it and one that does not.
    if (row.kind === 'rerank') {
      const results = await rerank({ target, query: prompt, documents: [prompt, 'Unrelated text.'], timeouts: CONNECTION_TEST_TIMEOUTS });
      const best = results[0];
      return {
        ok: true,
        content: best ? `Ranked 2 passages; the best was #${best.index + 1} (relevance ${best.relevanceScore})` : 'Ranked 2 passages',
        finishReason: null,
        dimensions: null,
        latencyMs: elapsed(),
        error: null,
      };
    }
    const out = await getAdapter(target.apiBase, target.connectionType).complete({
      target,
      messages: [{ role: 'user', content: prompt }],
      params: { maxTokens: CONNECTION_TEST_MAX_TOKENS },
      timeouts: CONNECTION_TEST_TIMEOUTS,
    });
    return { ok: true, content: out.content, finishReason: out.finishReason, dimensions: null, latencyMs: elapsed(), error: null };
  } catch (err) {
    const pe = classifyProviderError(err);
    const upstream = [pe.upstreamStatus, pe.upstreamCode].filter((v) => v !== undefined).join(' ');
    return testFailure(elapsed(), { status: httpStatusFor(pe), code: pe.code, detail: `${pe.message}${upstream ? ` (upstream ${upstream})` : ''}` });
  }
}

/** A connection test that failed: no answer, and why (`dimensions`: the size of a vector that did not fit). */
export function testFailure(latencyMs: number, error: NonNullable<ConnectionTestT['error']>, dimensions: number | null = null): ConnectionTestT {
  return { ok: false, content: null, finishReason: null, dimensions, latencyMs, error };
}
