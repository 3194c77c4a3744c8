/** `GET /v1/models/{id}` through the official SDK, and `x-request-id` on every kind of answer. */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OpenAIModel } from '../../src/modules/openai-compat/schema.js';
import { newTeam, startTestApp, type TestApp } from '../helpers/app.js';
import { createWorkspace } from '../helpers/factories.js';
import { expectShape } from '../helpers/shape.js';
import { useStandIn } from '../support/use-standin.js';
import { sdk, v1Setup } from './v1-helpers.js';

const s = useStandIn();
let t: TestApp;
let baseUrl: string;

beforeAll(async () => {
  t = await startTestApp();
  baseUrl = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await t.close();
});

describe('GET /v1/models/{id}', () => {
  it('answers each listed model by its id, as the SDK asks for it', async () => {
    const { team, model, ws } = await v1Setup(t, s);
    const client = sdk(baseUrl, team.ownerKey);
    for (const id of [`workspace/${ws.id}`, `workspace/${ws.id}/${model.id}`]) {
      const m = await client.models.retrieve(id);
      expectShape(OpenAIModel, JSON.parse(JSON.stringify(m)));
      expect(m).toMatchObject({ id, object: 'model', owned_by: 'atrium', atrium: { workspaceId: ws.id, modelId: model.id } });
    }
    // unescaped slashes too
    // raw: the id's slashes left unescaped, where the typed client escapes a path parameter
    const res = await fetch(`${baseUrl}/v1/models/workspace/${ws.id}`, { headers: { authorization: `Bearer ${team.ownerKey}` } });
    expect(res.status).toBe(200);
  });

  it('is 404 model_not_found for another team\u2019s workspace, a private one, a model not in it, or nonsense; 401 without a key', async () => {
    const { team, ws } = await v1Setup(t, s);
    const other = await newTeam(t);
    const member = await team.addUser('member');
    const priv = await createWorkspace(t, team.ownerKey, { sharingType: 'PRIVATE' });
    const cases: Array<[string, string]> = [
      [other.ownerKey, `workspace/${ws.id}`],
      [member.key, `workspace/${priv.id}`],
      [team.ownerKey, `workspace/${ws.id}/00000000-0000-4000-8000-000000000000`],
      [team.ownerKey, 'gpt-4o'],
      [team.ownerKey, '%E0%A4%A'],
    ];
    for (const [key, id] of cases) {
      const err = await sdk(baseUrl, key)
        .models.retrieve(id)
        .catch((e: unknown) => e);
      expect(err, id).toBeInstanceOf(OpenAI.NotFoundError);
      expect((err as InstanceType<typeof OpenAI.NotFoundError>).code).toBe('model_not_found');
    }
    const anonymous = await t.api().GET('/v1/models/{model}', { params: { path: { model: `workspace/${ws.id}` } } });
    expect(anonymous.response.status).toBe(401);
  });
});

describe('x-request-id', () => {
  it('is on every answer: JSON, problem+json, OpenAI errors, unknown paths and event streams', async () => {
    const { team, ws } = await v1Setup(t, s);
    const api = t.api(team.ownerKey);
    const anonymous = t.api();
    const typed = [
      await api.GET('/api/v1/me'),
      await anonymous.GET('/api/v1/me'),
      await anonymous.GET('/v1/models'),
      await api.POST('/v1/chat/completions', {
        body: { model: `workspace/${ws.id}`, messages: [{ role: 'user', content: 'hi' }], stream: true },
        parseAs: 'text',
      }),
      await api.POST('/api/v1/chat/{workspaceId}/completions/stream', { params: { path: { workspaceId: ws.id } }, body: { prompt: 'hi' }, parseAs: 'text' }),
    ];
    expect(typed.map((r) => r.response.status)).toEqual([200, 401, 401, 200, 200]);
    // paths the document does not have
    const others = [await fetch(`${baseUrl}/nowhere/api`), await fetch(`${baseUrl}/healthz`)];
    for (const r of others) await r.text();
    const ids = [...typed.map((r) => r.response), ...others].map((r) => r.headers.get('x-request-id'));
    expect(ids).toHaveLength(7);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('takes a sane id from the client, and replaces one that is not', async () => {
    const sane = 'trace-42:abc/DEF_1.2';
    const res = await fetch(`${baseUrl}/healthz`, { headers: { 'x-request-id': sane } });
    expect(res.headers.get('x-request-id')).toBe(sane);
    for (const bad of ['has space', 'x'.repeat(129), 'quote"d', '']) {
      const r = await fetch(`${baseUrl}/healthz`, { headers: { 'x-request-id': bad } });
      const id = r.headers.get('x-request-id');
      expect(id).not.toBe(bad);
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
    }
  });
});
