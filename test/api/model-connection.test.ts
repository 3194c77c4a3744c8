/** POST /api/v1/models/{modelId}/test: the web app's "test connection" (issue 13). */
import { Type } from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConnectionTest } from '../../src/modules/models/schema.js';
import { ADMIN_KEY, expectProblem, newTeam, startTestApp, type TestApp } from '../helpers/app.js';
import { createModel } from '../helpers/factories.js';
import { expectShape } from '../helpers/shape.js';
import { useStandIn } from '../support/use-standin.js';

let t: TestApp;
const s = useStandIn();
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const test = (key: string, id: string, payload: Record<string, unknown> = { prompt: 'Say hi' }) =>
  t.request({ method: 'POST', url: `/api/v1/models/${id}/test`, key, payload });

describe('testing a model connection', () => {
  it('sends the one-line prompt and answers with what the provider said, storing no prompt log', async () => {
    const a = await newTeam(t);
    for (const kind of ['OPENAI', 'ANTHROPIC', 'GOOGLE'] as const) {
      const m = await createModel(t, a.ownerKey, s.modelBody(kind));
      const before = s.standIn.requests.length;
      const res = await test(a.ownerKey, m.id, { prompt: `ping ${kind}` });
      expect(res.statusCode).toBe(200);
      const body = expectShape(ConnectionTest, res.json());
      expect(body).toMatchObject({ ok: true, content: `Echo: ping ${kind}`, error: null });
      expect(body.latencyMs).toBeGreaterThanOrEqual(0);
      expect(s.standIn.requests.length).toBe(before + 1);
    }
    const logs = await t.request({ method: 'GET', url: '/api/v1/chat/prompt-logs/paged', key: a.ownerKey });
    expect(logs.json().totalElements).toBe(0);
  });

  it('uses a default prompt when the body is empty', async () => {
    const a = await newTeam(t);
    const m = await createModel(t, a.ownerKey, s.modelBody('OPENAI'));
    const res = await test(a.ownerKey, m.id, {});
    expect(res.statusCode).toBe(200);
    expect(res.json().ok).toBe(true);
    expect(res.json().content).toMatch(/^Echo: Reply with one short sentence/);
  });

  it('reports a failing provider as the answer, with the upstream status, and never the key', async () => {
    const a = await newTeam(t);
    const secret = 'sk-connection-test-secret-9876';
    const m = await createModel(t, a.ownerKey, s.modelBody('OPENAI', { apiKey: secret }));
    s.standIn.set({ failStatus: 401 });
    const res = await test(a.ownerKey, m.id);
    expect(res.statusCode).toBe(200);
    const body = expectShape(ConnectionTest, res.json());
    expect(body.ok).toBe(false);
    expect(body.content).toBeNull();
    expect(body.error).toMatchObject({ status: 502, code: 'provider_auth_failed' });
    expect(body.error!.detail).toContain('upstream 401');
    expect(res.body).not.toContain(secret);

    s.standIn.set({ failStatus: 500 });
    const down = await test(a.ownerKey, m.id);
    expect(down.json()).toMatchObject({ ok: false, error: { status: 502 } });
  });

  it('reports a model without a base model or at an unreachable URL as a failed test', async () => {
    const a = await newTeam(t);
    const unconfigured = await createModel(t, a.ownerKey, { ...s.modelBody('OPENAI'), baseModel: null });
    const res = await test(a.ownerKey, unconfigured.id);
    expect(res.json()).toMatchObject({ ok: false, error: { status: 400, code: 'model_not_configured' } });

    const nowhere = await createModel(t, a.ownerKey); // http://127.0.0.1:9/v1: nothing listens
    const r2 = await test(a.ownerKey, nowhere.id);
    expect(r2.statusCode).toBe(200);
    expect(r2.json().ok).toBe(false);
    expect(r2.json().error.status).toBeGreaterThanOrEqual(500);
  });

  it('is refused to members (403) and to other teams (404); bad input is a 400', async () => {
    const a = await newTeam(t);
    const b = await newTeam(t);
    const m = await createModel(t, a.ownerKey, s.modelBody('OPENAI'));
    const member = await a.addUser('member');
    const admin = await a.addUser('admin');
    const before = s.standIn.requests.length;
    expectProblem(await test(member.key, m.id), 403);
    expectProblem(await test(b.ownerKey, m.id), 404);
    expect(s.standIn.requests.length).toBe(before);
    expect((await test(admin.key, m.id)).json().ok).toBe(true);
    expectProblem(await test(a.ownerKey, 'not-a-uuid'), 400);
    expectProblem(await test(a.ownerKey, m.id, { prompt: '' }), 400);
    expectProblem(await test(a.ownerKey, m.id, { prompt: 'x', extra: 1 }), 400);
    expectProblem(await test(a.ownerKey, m.id, { prompt: 'x'.repeat(2001) }), 400);
  });

  it('lets a team admin test a system model before adding it to the team', async () => {
    const sys = await createModel(t, ADMIN_KEY, s.modelBody('OPENAI', { name: `sys-${Date.now()}` }), '?system=true');
    const a = await newTeam(t);
    const listed = await t.request({ method: 'GET', url: '/api/v1/models?includeSystem=true', key: a.ownerKey });
    expectShape(Type.Array(Type.Object({ id: Type.String() })), listed.json());
    expect(listed.json().some((x: { id: string }) => x.id === sys.id)).toBe(true);
    expect((await test(a.ownerKey, sys.id)).json()).toMatchObject({ ok: true });
  });
});
