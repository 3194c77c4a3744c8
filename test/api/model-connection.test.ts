/** POST /api/v1/models/{modelId}/test: the web app's "test connection". */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
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

const test = (key: string, modelId: string, body: { prompt: string } = { prompt: 'Say hi' }) =>
  t.api(key).POST('/api/v1/models/{modelId}/test', { params: { path: { modelId } }, body });

describe('testing a model connection', () => {
  it('sends the one-line prompt and answers with what the provider said, storing no prompt log', async () => {
    const a = await newTeam(t);
    for (const kind of ['OPENAI', 'ANTHROPIC', 'GOOGLE'] as const) {
      const m = await createModel(t, a.ownerKey, s.modelBody(kind));
      const before = s.standIn.requests.length;
      const res = await test(a.ownerKey, m.id, { prompt: `ping ${kind}` });
      expect(res.response.status).toBe(200);
      const body = expectShape(ConnectionTest, res.data);
      expect(body).toMatchObject({ ok: true, content: `Echo: ping ${kind}`, error: null });
      expect(body.latencyMs).toBeGreaterThanOrEqual(0);
      expect(s.standIn.requests.length).toBe(before + 1);
    }
    const logs = await t.api(a.ownerKey).GET('/api/v1/chat/prompt-logs/paged');
    expect(logs.data?.totalElements).toBe(0);
  });

  it('uses a default prompt when the body is empty', async () => {
    const a = await newTeam(t);
    const m = await createModel(t, a.ownerKey, s.modelBody('OPENAI'));
    // raw: an empty body (the document lists prompt as required; the server defaults it)
    const res = await t.request({ method: 'POST', url: `/api/v1/models/${m.id}/test`, key: a.ownerKey, payload: {} });
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
    expect(res.response.status).toBe(200);
    const body = expectShape(ConnectionTest, res.data);
    expect(body.ok).toBe(false);
    expect(body.content).toBeNull();
    expect(body.error).toMatchObject({ status: 502, code: 'provider_auth_failed' });
    expect(body.error!.detail).toContain('upstream 401');
    expect(JSON.stringify(res.data)).not.toContain(secret);

    s.standIn.set({ failStatus: 500 });
    const down = await test(a.ownerKey, m.id);
    expect(down.data).toMatchObject({ ok: false, error: { status: 502 } });
  });

  it('reports a model without a base model or at an unreachable URL as a failed test', async () => {
    const a = await newTeam(t);
    const unconfigured = await createModel(t, a.ownerKey, { ...s.modelBody('OPENAI'), baseModel: null });
    const res = await test(a.ownerKey, unconfigured.id);
    expect(res.data).toMatchObject({ ok: false, error: { status: 400, code: 'model_not_configured' } });

    const nowhere = await createModel(t, a.ownerKey); // http://127.0.0.1:9/v1: nothing listens
    const r2 = await test(a.ownerKey, nowhere.id);
    expect(r2.response.status).toBe(200);
    expect(r2.data!.ok).toBe(false);
    expect(r2.data!.error!.status).toBeGreaterThanOrEqual(500);
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
    expect((await test(admin.key, m.id)).data?.ok).toBe(true);
    expectProblem(await test(a.ownerKey, 'not-a-uuid'), 400);
    expectProblem(await test(a.ownerKey, m.id, { prompt: '' }), 400);
    // raw: a field the document does not have
    expectProblem(await t.request({ method: 'POST', url: `/api/v1/models/${m.id}/test`, key: a.ownerKey, payload: { prompt: 'x', extra: 1 } }), 400);
    expectProblem(await test(a.ownerKey, m.id, { prompt: 'x'.repeat(2001) }), 400);
  });

  it('tests an embedding model on its embeddings endpoint and reports the vector size', async () => {
    const a = await newTeam(t);
    for (const kind of ['OPENAI', 'GOOGLE'] as const) {
      const m = await createModel(t, a.ownerKey, { ...s.modelBody(kind, { baseModel: `embed-${kind.toLowerCase()}` }), kind: 'embedding' });
      const before = s.standIn.requests.length;
      const res = await test(a.ownerKey, m.id, { prompt: 'how many holiday days' });
      expect(res.response.status).toBe(200);
      const body = expectShape(ConnectionTest, res.data);
      expect(body).toMatchObject({ ok: true, dimensions: 5, finishReason: null, error: null });
      expect(body.content).toContain('5 dimensions');
      const sent = s.standIn.requests.slice(before);
      expect(sent).toHaveLength(1);
      expect(sent[0]!.path).toMatch(/embed/i);
    }
    // a chat model's answer has no dimensions
    const chat = await createModel(t, a.ownerKey, s.modelBody('OPENAI'));
    expect((await test(a.ownerKey, chat.id)).data).toMatchObject({ ok: true, dimensions: null });
  });

  it('an embedding model: a failing endpoint, and a vector of another size than configured, are failed tests', async () => {
    const a = await newTeam(t);
    const m = await createModel(t, a.ownerKey, { ...s.modelBody('OPENAI', { baseModel: 'embed-x' }), kind: 'embedding' });
    s.standIn.set({ failEmbeddings: 401 });
    const failed = expectShape(ConnectionTest, (await test(a.ownerKey, m.id)).data);
    expect(failed).toMatchObject({ ok: false, content: null, dimensions: null, error: { status: 502, code: 'provider_auth_failed' } });

    // a server that ignores the requested size (the stand-in honours it, so this one answers 3 numbers whatever is asked)
    const fixed = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            object: 'list',
            data: [{ object: 'embedding', index: 0, embedding: [0.1, 0.2, 0.3] }],
            model: 'x',
            usage: { prompt_tokens: 1, total_tokens: 1 },
          }),
        );
      });
    });
    await new Promise<void>((r) => fixed.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(fixed.address() as AddressInfo).port}/v1`;
      const sized = await createModel(t, a.ownerKey, { ...s.modelBody('OPENAI', { baseModel: 'embed-y', url }), kind: 'embedding', embeddingDimensions: 8 });
      const body = expectShape(ConnectionTest, (await test(a.ownerKey, sized.id)).data);
      expect(body).toMatchObject({ ok: false, dimensions: 3, error: { status: 502, code: 'provider_bad_response' } });
      expect(body.error!.detail).toContain('3 dimensions');
      expect(body.error!.detail).toContain('set to 8');
    } finally {
      await new Promise((r) => fixed.close(r));
    }
  });

  it('lets a team admin test a system model before adding it to the team', async () => {
    const sys = await createModel(t, ADMIN_KEY, s.modelBody('OPENAI', { name: `sys-${Date.now()}` }), { system: true });
    const a = await newTeam(t);
    const listed = await t.api(a.ownerKey).GET('/api/v1/models', { params: { query: { includeSystem: true } } });
    expectShape(Type.Array(Type.Object({ id: Type.String() })), listed.data);
    expect(listed.data?.some((x) => x.id === sys.id)).toBe(true);
    expect((await test(a.ownerKey, sys.id)).data).toMatchObject({ ok: true });
  });
});
