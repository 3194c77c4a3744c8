/**
 * Provider calls as telemetry sees them: each adapter call timed (whole call, and the first token
 * of a stream) and its usage counted, through hooks.ts. The adapter is wrapped only when an
 * observer wants provider calls; otherwise getAdapter returns it as it is.
 */
import { DEFAULT_ANTHROPIC_BASE_URL } from '../providers/anthropic.js';
import { DEFAULT_GEMINI_BASE_URL } from '../providers/google.js';
import { DEFAULT_OPENAI_BASE_URL } from '../providers/openai.js';
import type { ApiBase, ConnectionType, ProviderAdapter, ProviderRequest, ProviderTarget } from '../providers/types.js';
import { observe, observingProviders, type ProviderCallInfo } from './hooks.js';

const DEFAULT_BASE: Record<ApiBase, string> = {
  OPENAI: DEFAULT_OPENAI_BASE_URL,
  ANTHROPIC: DEFAULT_ANTHROPIC_BASE_URL,
  GOOGLE: DEFAULT_GEMINI_BASE_URL,
};

/**
 * The `api_base` label: the origin of the base URL the model is configured with (its path may
 * hold an Azure deployment or a tenant id, so it is dropped), or the provider's public default.
 * Bounded by the number of configured base URLs, never by traffic.
 */
export function apiBaseLabel(target: Pick<ProviderTarget, 'apiBase' | 'url'>): string {
  try {
    return new URL(target.url ?? DEFAULT_BASE[target.apiBase]).origin;
  } catch {
    return 'invalid';
  }
}

function systemOf(apiBase: ApiBase, connectionType: ConnectionType): ProviderCallInfo['system'] {
  if (connectionType === 'AZURE') return 'az.ai.openai';
  return apiBase === 'OPENAI' ? 'openai' : apiBase === 'ANTHROPIC' ? 'anthropic' : 'gcp.gemini';
}

function infoOf(req: ProviderRequest, streaming: boolean): ProviderCallInfo {
  const t = req.target;
  return { system: systemOf(t.apiBase, t.connectionType), apiBase: apiBaseLabel(t), model: t.baseModel, operation: 'chat', streaming };
}

/** `adapter` as it is when nothing observes provider calls, else a wrapper that reports each call. */
export function observedAdapter<A extends ProviderAdapter>(adapter: A): A {
  if (!observingProviders()) return adapter;
  return {
    ...adapter,
    async complete(req) {
      const call = observe.providerCall(infoOf(req, false));
      try {
        const r = await adapter.complete(req);
        call.end({ usage: r.usage, error: null });
        return r;
      } catch (error) {
        call.end({ usage: null, error });
        throw error;
      }
    },
    async *stream(req) {
      const call = observe.providerCall(infoOf(req, true));
      let usage: { promptTokens: number; completionTokens: number } | null = null;
      let error: unknown = null;
      try {
        for await (const ev of adapter.stream(req)) {
          if (ev.type === 'done') usage = ev.usage;
          else call.firstToken();
          yield ev;
        }
      } catch (err) {
        error = err;
        throw err;
      } finally {
        // A consumer that stops early (the client left) ends the call here too.
        call.end({ usage, error });
      }
    },
  };
}
