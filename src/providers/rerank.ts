/**
 * Rerank adapter: a question and candidate passages → each passage's relevance, from a server
 * speaking the rerank API that Cohere, Jina, Voyage and text-embeddings-inference-style servers
 * share: `POST {url}/rerank` with `{model, query, documents, top_n}`, answered
 * `{results: [{index, relevance_score}]}` (best first, `index` into `documents`). The key, when
 * set, goes as `Authorization: Bearer`. A rerank model is an OPENAI-protocol model with a URL
 * (the family of self-hosted and compatible servers); its `baseModel` is sent as `model`.
 *
 * Same timeouts, cancellation and failure classification as the chat adapters (call-control.ts,
 * classify.ts); redirects are never followed; the upstream body never reaches a client.
 */
import { guardedCall } from './call-control.js';
import { classifyHttpStatus } from './classify.js';
import { providerBadResponse, ProviderError } from './errors.js';
import type { ProviderTarget, ProviderTimeouts } from './types.js';

export interface RerankRequest {
  target: ProviderTarget;
  query: string;
  documents: string[];
  /** how many of the best results to return (all when absent) */
  topN?: number;
  timeouts: ProviderTimeouts;
  signal?: AbortSignal;
}

export interface RerankResult {
  /** index into `documents` */
  index: number;
  relevanceScore: number;
}

/** The rerank endpoint of a model's base URL (a trailing slash is dropped). */
export function rerankUrl(base: string): string {
  return `${base.replace(/\/+$/, '')}/rerank`;
}

/** Whether a model of this protocol and connection can be a rerank model. */
export function supportsRerank(target: Pick<ProviderTarget, 'apiBase' | 'connectionType'>): boolean {
  return target.apiBase === 'OPENAI' && target.connectionType === 'URL';
}

function parse(body: unknown, count: number): RerankResult[] {
  const results = (body as { results?: unknown } | null)?.results;
  if (!Array.isArray(results)) throw providerBadResponse();
  const out: RerankResult[] = [];
  const seen = new Set<number>();
  for (const r of results as Array<{ index?: unknown; relevance_score?: unknown; score?: unknown }>) {
    const index = r?.index;
    // TEI's native answer calls it `score`
    const score = r?.relevance_score ?? r?.score;
    if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= count || seen.has(index)) throw providerBadResponse();
    if (typeof score !== 'number' || !Number.isFinite(score)) throw providerBadResponse();
    seen.add(index);
    out.push({ index, relevanceScore: score });
  }
  return out.sort((a, b) => b.relevanceScore - a.relevanceScore || a.index - b.index);
}

/** The documents' relevance to the query, best first. Throws a ProviderError (errors.ts) on any failure. */
export async function rerank(req: RerankRequest): Promise<RerankResult[]> {
  if (req.documents.length === 0) return [];
  if (!supportsRerank(req.target) || !req.target.url) throw new ProviderError('upstream_model_not_found', 'This model cannot rerank: it needs an OPENAI URL');
  const url = rerankUrl(req.target.url);
  const callReq = { target: req.target, messages: [], params: {}, timeouts: req.timeouts, ...(req.signal ? { signal: req.signal } : {}) };
  return guardedCall(callReq, async (signal) => {
    const res = await fetch(url, {
      method: 'POST',
      redirect: 'manual',
      signal,
      headers: {
        'content-type': 'application/json',
        accept: 'application/json',
        ...(req.target.apiKey ? { authorization: `Bearer ${req.target.apiKey}` } : {}),
      },
      body: JSON.stringify({
        model: req.target.baseModel,
        query: req.query,
        documents: req.documents,
        ...(req.topN !== undefined ? { top_n: req.topN } : {}),
      }),
    });
    const text = await res.text();
    let body: unknown = null;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      if (res.ok) throw providerBadResponse();
    }
    if (!res.ok) throw classifyHttpStatus(res.status, body, Object.fromEntries(res.headers.entries()));
    return parse(body, req.documents.length);
  });
}
