/**
 * The stand-in provider's lifecycle for a test file, in one line:
 *
 *   const s = useStandIn();                       // beforeAll start, afterAll close, beforeEach reset
 *   s.standIn.set({ failStatus: 429 });           // switches, recorded requests
 *   s.target('ANTHROPIC', { apiKey: null });      // a ProviderTarget pointing at it
 *   s.modelBody('GOOGLE');                        // the same as an Atrium ModelRequest body
 *
 * `reset: false` keeps switches and recorded requests between tests.
 */
import { afterAll, beforeAll, beforeEach } from 'vitest';
import type { ProviderTarget } from '../../src/providers/types.js';
import { startStandInProvider, type StandInProvider } from './standin-provider.js';

/** AZURE: endpoint form with deployment = baseModel; AZURE_V1: Azure's version-less v1 API. */
export type StandInKind = 'OPENAI' | 'AZURE' | 'AZURE_V1' | 'ANTHROPIC' | 'GOOGLE';

export interface StandInHandle {
  /** The running stand-in (only inside hooks and tests). */
  readonly standIn: StandInProvider;
  target(kind: StandInKind, over?: Partial<ProviderTarget>): ProviderTarget;
  /** Fields of a model create request (`apiBase`, `connectionType`, `url`, `baseModel`, `apiKey`). */
  modelBody(kind: StandInKind, over?: Record<string, unknown>): Record<string, unknown>;
}

const DEFAULTS: Record<
  StandInKind,
  { apiBase: ProviderTarget['apiBase']; connectionType: ProviderTarget['connectionType']; apiKey: string; baseModel: string }
> = {
  OPENAI: { apiBase: 'OPENAI', connectionType: 'URL', apiKey: 'sk-test-openai', baseModel: 'gpt-test' },
  AZURE: { apiBase: 'OPENAI', connectionType: 'AZURE', apiKey: 'azure-key-1', baseModel: 'my-deployment' },
  AZURE_V1: { apiBase: 'OPENAI', connectionType: 'AZURE', apiKey: 'azure-key-1', baseModel: 'gpt-test' },
  ANTHROPIC: { apiBase: 'ANTHROPIC', connectionType: 'URL', apiKey: 'sk-ant-test', baseModel: 'claude-test' },
  GOOGLE: { apiBase: 'GOOGLE', connectionType: 'URL', apiKey: 'gemini-key', baseModel: 'gemini-test' },
};

export function useStandIn(opts: { reset?: boolean } = {}): StandInHandle {
  let running: StandInProvider | undefined;
  beforeAll(async () => {
    running = await startStandInProvider();
  });
  afterAll(async () => {
    await running?.close();
    running = undefined;
  });
  if (opts.reset !== false) beforeEach(() => running?.reset());

  const standIn = (): StandInProvider => {
    if (!running) throw new Error('useStandIn(): the stand-in runs only inside hooks and tests');
    return running;
  };
  const urlOf = (kind: StandInKind): string => {
    const s = standIn();
    switch (kind) {
      case 'OPENAI':
        return s.openaiBaseUrl;
      case 'AZURE':
        return s.azureBaseUrl;
      case 'AZURE_V1':
        return s.azureV1BaseUrl;
      case 'ANTHROPIC':
        return s.anthropicBaseUrl;
      case 'GOOGLE':
        return s.geminiBaseUrl;
    }
  };
  return {
    get standIn() {
      return standIn();
    },
    target: (kind, over = {}) => ({ ...DEFAULTS[kind], url: urlOf(kind), ...over }),
    modelBody: (kind, over = {}) => ({ ...DEFAULTS[kind], url: urlOf(kind), ...over }),
  };
}
