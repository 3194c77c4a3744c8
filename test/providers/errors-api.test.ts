/**
 * Errors that say what went wrong, over HTTP: distinct codes, a provider's rate limit
 * passed on as 429 with its Retry-After, the upstream code in the prompt log for owners/admins
 * only — and never the upstream body.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectStatus } from '../helpers/api.js';
import { expectProblem, newTeam, startTestApp, type TestApp } from '../helpers/app.js';
import { createModel, createWorkspace } from '../helpers/factories.js';
import { LEAKED_SECRET } from '../support/standin-provider.js';
import { useStandIn, type StandInKind } from '../support/use-standin.js';

const s = useStandIn();
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

async function setup(kind: StandInKind) {
  const team = await newTeam(t);
  const m = await createModel(t, team.ownerKey, s.modelBody(kind));
  const ws = await createWorkspace(t, team.ownerKey, { modelIds: [m.id] });
  return { team, wsId: ws.id };
}
const complete = (key: string, workspaceId: string, prompt = 'x') =>
  t.api(key).POST('/api/v1/chat/{workspaceId}/completions', { params: { path: { workspaceId } }, body: { prompt } });
/** A header of the answer, undefined when absent. */
const header = (res: Awaited<ReturnType<typeof complete>>, name: string) => res.response.headers.get(name) ?? undefined;

describe.each<StandInKind>(['OPENAI', 'AZURE', 'ANTHROPIC', 'GOOGLE'])('provider failures over %s', (kind) => {
  it.each<[number, number, string, string | undefined]>([
    [401, 502, 'provider_auth_failed', 'false'],
    [403, 502, 'provider_auth_failed', 'false'],
    [404, 404, 'model_not_found', 'false'],
    [500, 502, 'provider_error', undefined],
  ])('upstream %d -> %d %s (x-should-retry: %s), without the upstream body', async (upstream, status, code, shouldRetry) => {
    const { team, wsId } = await setup(kind);
    s.standIn.set({ failStatus: upstream });
    const res = await complete(team.ownerKey, wsId);
    expect(expectProblem(res, status).code).toBe(code);
    expect(header(res, 'x-should-retry')).toBe(shouldRetry);
    expect(JSON.stringify(res.error)).not.toContain(LEAKED_SECRET);
  });

  it('a provider rate limit is our 429 with its Retry-After', async () => {
    const { team, wsId } = await setup(kind);
    s.standIn.set({ failStatus: 429, retryAfter: '17' });
    const res = await complete(team.ownerKey, wsId);
    expect(expectProblem(res, 429).code).toBe('provider_rate_limited');
    // @google/genai does not expose response headers on its errors: our default applies.
    expect(header(res, 'retry-after')).toBe(kind === 'GOOGLE' ? '10' : '17');
  });
});

describe('the prompt log', () => {
  it('shows the upstream status and code to owners/admins, not to members', async () => {
    const { team, wsId } = await setup('OPENAI');
    const member = await team.addUser('member');
    s.standIn.set({ contextWindow: { tokens: 50, style: 'llamacpp' } });
    const res = await complete(member.key, wsId, 'a prompt far too long for a window of fifty tokens '.repeat(10));
    expect(expectProblem(res, 400).code).toBe('context_length_exceeded');
    expect(header(res, 'x-should-retry')).toBe('false');

    const logsOf = async (key: string) => expectStatus(await t.api(key).GET('/api/v1/chat/prompt-logs/paged'), 200).content;
    const [ownerView] = await logsOf(team.ownerKey);
    expect(ownerView!.error).toBe(
      'provider_context_length_exceeded: The prompt is longer than the model\u2019s context window [upstream 400 exceed_context_size_error]',
    );
    const [memberView] = await logsOf(member.key);
    expect(memberView!.error).toBe('provider_context_length_exceeded: The prompt is longer than the model\u2019s context window');

    const query = { startDate: '2000-01-01T00:00:00Z', endDate: '2100-01-01T00:00:00Z' };
    const csv = expectStatus(await t.api(member.key).GET('/api/v1/chat/prompt-logs/csv', { params: { query }, parseAs: 'text' }), 200);
    expect(csv).toContain('provider_context_length_exceeded');
    expect(csv).not.toContain('[upstream');
    expect(csv).not.toContain(LEAKED_SECRET);
  });
});
