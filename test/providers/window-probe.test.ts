/**
 * A declared contextWindow larger than what the provider serves gets a warning in the model's
 * create/update response — best effort, never blocking the write.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectStatus } from '../helpers/api.js';
import { newTeam, startTestApp, type TestApp } from '../helpers/app.js';
import { createModel } from '../helpers/factories.js';
import { useStandIn } from '../support/use-standin.js';

const s = useStandIn();
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const modelAt = (modelId: string) => ({ params: { path: { modelId } } });

describe('contextWindow warnings', () => {
  it('llama.cpp (/props n_ctx): warns when the declared window is larger, not when it fits', async () => {
    const team = await newTeam(t);
    s.standIn.set({ contextWindow: { tokens: 4096, style: 'llamacpp' } });
    const big = await createModel(t, team.ownerKey, { ...s.modelBody('OPENAI'), contextWindow: 8192 });
    expect(big.warnings).toEqual([expect.stringContaining('contextWindow 8192 is larger than the 4096 tokens the provider reports (llama.cpp /props n_ctx)')]);
    const fits = await createModel(t, team.ownerKey, { ...s.modelBody('OPENAI'), contextWindow: 4096 });
    expect(fits.warnings).toBeUndefined();

    const api = t.api(team.ownerKey);
    const patched = expectStatus(await api.PATCH('/api/v1/models/{modelId}', { ...modelAt(fits.id), body: { contextWindow: 32768 } }), 200);
    expect(patched.warnings).toEqual([expect.stringContaining('contextWindow 32768')]);
    // GET shows the stored model only; warnings belong to the write that caused them.
    const got = expectStatus(await api.GET('/api/v1/models/{modelId}', modelAt(fits.id)), 200);
    expect(got).not.toHaveProperty('warnings');
  });

  it('a model says which window its turns use: declared, reported by the provider, or the default', async () => {
    const team = await newTeam(t);
    const unknown = await createModel(t, team.ownerKey, { ...s.modelBody('OPENAI'), contextWindow: null }); // /props 404
    expect(unknown).toMatchObject({ contextWindowUsed: 8192, contextWindowSource: 'default', contextWindowProbe: null });
    s.standIn.set({ contextWindow: { tokens: 4096, style: 'llamacpp' } });
    const api = t.api(team.ownerKey);
    const saved = expectStatus(await api.PATCH('/api/v1/models/{modelId}', { ...modelAt(unknown.id), body: { name: 'Probed now' } }), 200);
    expect(saved).toMatchObject({
      contextWindow: null,
      contextWindowUsed: 4096,
      contextWindowSource: 'probed',
      contextWindowProbe: 'llama.cpp /props n_ctx',
    });
    const declared = expectStatus(await api.PATCH('/api/v1/models/{modelId}', { ...modelAt(unknown.id), body: { contextWindow: 2048 } }), 200);
    expect(declared).toMatchObject({ contextWindow: 2048, contextWindowUsed: 2048, contextWindowSource: 'declared', contextWindowProbe: null });
    const g = await createModel(t, team.ownerKey, { ...s.modelBody('GOOGLE'), contextWindow: null });
    expect(g).toMatchObject({ contextWindowUsed: 4096, contextWindowSource: 'probed', contextWindowProbe: 'Gemini inputTokenLimit + outputTokenLimit' });
  });

  it('Gemini (inputTokenLimit + outputTokenLimit)', async () => {
    const team = await newTeam(t);
    s.standIn.set({ contextWindow: { tokens: 4096, style: 'llamacpp' } });
    const m = await createModel(t, team.ownerKey, { ...s.modelBody('GOOGLE'), contextWindow: 1_000_000 });
    expect(m.warnings).toEqual([expect.stringContaining('the 4096 tokens the provider reports (Gemini inputTokenLimit')]);
  });

  it('never blocks: an unreachable provider, a server that cannot tell, or a protocol without metadata', async () => {
    const team = await newTeam(t);
    const unreachable = await createModel(t, team.ownerKey, { url: 'http://127.0.0.1:9/v1', contextWindow: 1_000_000 });
    expect(unreachable.warnings).toBeUndefined();
    const silent = await createModel(t, team.ownerKey, { ...s.modelBody('OPENAI'), contextWindow: 1_000_000 }); // no switch: /props 404
    expect(silent.warnings).toBeUndefined();
    s.standIn.set({ contextWindow: { tokens: 4096, style: 'llamacpp' } });
    const anthropic = await createModel(t, team.ownerKey, { ...s.modelBody('ANTHROPIC'), contextWindow: 1_000_000 });
    expect(anthropic.warnings).toBeUndefined();
  });
});
