/**
 * Best-effort discovery of the context window a provider really serves, to warn when a model's
 * declared `contextWindow` is larger (the history would be fitted to a window the model does not
 * have). Never throws and never blocks longer than {@link PROBE_TIMEOUT_MS}; `null` = unknown.
 *
 * Where the protocol can tell:
 * - OPENAI / URL: llama.cpp's `GET {origin}/props` → `default_generation_settings.n_ctx` (the
 *   runtime window), else `GET {url}/models` → the entry for baseModel: `context_length`
 *   (OpenRouter, LM Studio's `max_context_length`), vLLM `max_model_len`, llama.cpp `meta.n_ctx_train`.
 * - GOOGLE: `GET {origin}/v1beta/models/{model}` → `inputTokenLimit` (+ `outputTokenLimit`).
 * - ANTHROPIC, AZURE: their model metadata carries no window; null.
 *
 * The caller runs the SSRF check on the URL first (as for any provider call); redirects are not followed.
 */
import { withDeadline } from '../deadline.js';
import { googleBaseUrl } from './google.js';
import type { ProviderTarget } from './types.js';
import { trimSlashes } from './util.js';

export const PROBE_TIMEOUT_MS = 1500;

export interface ProbedWindow {
  tokens: number;
  /** Where the number came from, e.g. `llama.cpp /props n_ctx`. */
  source: string;
}

const MAX_BODY = 1_000_000;

async function getJson(url: string, headers: Record<string, string>, signal: AbortSignal): Promise<unknown> {
  const res = await fetch(url, { headers, signal, redirect: 'manual' });
  if (!res.ok) {
    await res.body?.cancel().catch(() => {});
    return undefined;
  }
  const text = await res.text();
  if (text.length > MAX_BODY) return undefined;
  return JSON.parse(text) as unknown;
}

const positive = (v: unknown): number | undefined => (typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : undefined);
const obj = (v: unknown): Record<string, unknown> | undefined => (v && typeof v === 'object' ? (v as Record<string, unknown>) : undefined);

async function probeOpenAI(target: ProviderTarget, signal: AbortSignal): Promise<ProbedWindow | null> {
  if (!target.url) return null; // api.openai.com publishes no window in /models
  const base = trimSlashes(target.url);
  const headers: Record<string, string> = target.apiKey ? { authorization: `Bearer ${target.apiKey}` } : {};
  const props = obj(await getJson(`${base.replace(/\/v1$/, '')}/props`, headers, signal).catch(() => undefined));
  const nCtx = positive(obj(props?.default_generation_settings)?.n_ctx) ?? positive(props?.n_ctx);
  if (nCtx) return { tokens: nCtx, source: 'llama.cpp /props n_ctx' };

  const list = obj(await getJson(`${base}/models`, headers, signal).catch(() => undefined));
  const data = Array.isArray(list?.data) ? (list.data as unknown[]) : [];
  const entry = obj(data.find((m) => obj(m)?.id === target.baseModel));
  if (!entry) return null;
  const fields: Array<[unknown, string]> = [
    [entry.context_length, '/models context_length'],
    [entry.max_context_length, '/models max_context_length'],
    [entry.max_model_len, '/models max_model_len'],
    [obj(entry.meta)?.n_ctx_train, '/models meta.n_ctx_train'],
  ];
  for (const [v, source] of fields) {
    const tokens = positive(v);
    if (tokens) return { tokens, source };
  }
  return null;
}

async function probeGoogle(target: ProviderTarget, signal: AbortSignal): Promise<ProbedWindow | null> {
  const { baseUrl, apiVersion } = googleBaseUrl(target.url);
  const model = target.baseModel.replace(/^models\//, '');
  const headers: Record<string, string> = target.apiKey ? { 'x-goog-api-key': target.apiKey } : {};
  const m = obj(await getJson(`${baseUrl}/${apiVersion ?? 'v1beta'}/models/${encodeURIComponent(model)}`, headers, signal));
  const input = positive(m?.inputTokenLimit);
  if (!input) return null;
  // Gemini's limits are separate; the window Atrium fits into is input + output.
  return { tokens: input + (positive(m?.outputTokenLimit) ?? 0), source: 'Gemini inputTokenLimit + outputTokenLimit' };
}

/** The window the provider reports for this target, or null when it cannot tell (or did not answer in time). */
export async function probeContextWindow(target: ProviderTarget, timeoutMs = PROBE_TIMEOUT_MS): Promise<ProbedWindow | null> {
  try {
    return await withDeadline(timeoutMs, async (signal) => {
      if (target.apiBase === 'OPENAI' && target.connectionType === 'URL') return await probeOpenAI(target, signal);
      if (target.apiBase === 'GOOGLE') return await probeGoogle(target, signal);
      return null;
    });
  } catch {
    return null;
  }
}

/** The warning for a declared window larger than the probed one, or null. */
export function windowWarning(declared: number | null, probed: ProbedWindow | null): string | null {
  if (declared === null || probed === null || declared <= probed.tokens) return null;
  return `contextWindow ${declared} is larger than the ${probed.tokens} tokens the provider reports (${probed.source}); chat history is fitted to the declared window, so long threads may be refused`;
}
