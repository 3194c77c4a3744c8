/**
 * The fuzzer's known cases, kept as plain tests: each answered 500, or an oversized or
 * misleading 4xx, before it was fixed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_LISTED_PROBLEMS } from '../../src/http/problem.js';
import { expectProblem, newTeam, startTestApp, type TeamFixture, type TestApp } from '../helpers/app.js';
import { createModel, createWorkspace } from '../helpers/factories.js';
import { multipart } from '../helpers/multipart.js';

let t: TestApp;
let team: TeamFixture;
beforeAll(async () => {
  t = await startTestApp();
  team = await newTeam(t);
});
afterAll(() => t.close());

describe('integers beyond their column are a 400', () => {
  it.each([
    ['/api/v1/models?modelRating=2147483648', 'querystring/modelRating'],
    ['/api/v1/models/all?modelRating=99999999999', 'querystring/modelRating'],
    ['/api/v1/chat/prompt-logs/paged?page=100000000000000000', 'querystring/page'],
    ['/api/v1/chat/prompt-logs/paged?page=1000001&size=1000', 'querystring/page'],
  ])('GET %s', async (url, path) => {
    const res = await t.request({ method: 'GET', url, key: team.ownerKey });
    const body = expectProblem(res, 400);
    expect(body.errors).toEqual([expect.objectContaining({ path })]);
  });

  it('DELETE /users/2147483648', async () => {
    expectProblem(await t.request({ method: 'DELETE', url: '/api/v1/users/2147483648', key: team.ownerKey }), 400);
  });

  it.each([['groupSize'], ['contextWindow'], ['modelRating'], ['bitCount']])('a model %s of 2^31', async (field) => {
    const res = await t.request({ method: 'POST', url: '/api/v1/models', key: team.ownerKey, payload: { name: 'big', [field]: 2 ** 31 } });
    expect(expectProblem(res, 400).errors).toEqual(expect.arrayContaining([{ path: `body/${field}`, message: expect.stringMatching(/must be <=/) }]));
  });

  it('a workspace model maxTokens of 2^31, and a chat override of it', async () => {
    const model = await createModel(t, team.ownerKey);
    const ws = await createWorkspace(t, team.ownerKey, { modelIds: [model.id] });
    const settings = await t.request({ method: 'POST', url: `/api/v1/workspaces/${ws.id}/${model.id}`, key: team.ownerKey, payload: { maxTokens: 2 ** 31 } });
    expectProblem(settings, 400);
    const chat = await t.request({
      method: 'POST',
      url: `/api/v1/chat/${ws.id}/completions`,
      key: team.ownerKey,
      payload: { prompt: 'hi', maxTokens: 2 ** 31 },
    });
    expectProblem(chat, 400);
  });
});

describe('media types', () => {
  it('a JSON route refuses text/plain, a multipart form and a body without a type with 415', async () => {
    const asText = await t.request({
      method: 'POST',
      url: '/api/v1/workspaces',
      key: team.ownerKey,
      payload: '{"name":"x"}',
      headers: { 'content-type': 'text/plain' },
    });
    expect(expectProblem(asText, 415).code).toBe('unsupported_media_type');
    const form = multipart([{ name: 'name', value: 'x' }]);
    expectProblem(await t.request({ method: 'POST', url: '/api/v1/workspaces', key: team.ownerKey, ...form }), 415);
    const untyped = await t.request({ method: 'POST', url: '/api/v1/api-keys', key: team.ownerKey, payload: Buffer.from('{"name":"x"}') });
    expectProblem(untyped, 415);
    // … and still takes JSON with a charset, and a body-less request where the body is optional
    const ok = await t.request({
      method: 'POST',
      url: '/api/v1/workspaces',
      key: team.ownerKey,
      payload: '{"name":"x"}',
      headers: { 'content-type': 'application/json; charset=utf-8' },
    });
    expect(ok.statusCode).toBe(200);
  });

  it('a multipart route refuses JSON with 415', async () => {
    const res = await t.request({ method: 'POST', url: '/api/v1/plus', key: team.ownerKey, payload: { title: 'x' } });
    expectProblem(res, 415);
  });
});

describe('bounded problem lists', () => {
  it('thousands of unknown keys get a short answer that says how many problems there were', async () => {
    const payload = Object.fromEntries(Array.from({ length: 5_000 }, (_, i) => [`unknown${i}`, i]));
    const res = await t.request({ method: 'POST', url: '/api/v1/workspaces', key: team.ownerKey, payload: { name: 'x', ...payload } });
    const body = expectProblem(res, 400);
    expect((body.errors as unknown[]).length).toBe(MAX_LISTED_PROBLEMS);
    expect(body.detail).toMatch(/5000 problems; the first 20 are listed/);
    expect(res.body.length).toBeLessThan(10_000);
  });
});

describe('methods', () => {
  it.each([
    ['PUT', '/api/v1/models', 'GET, HEAD, POST'],
    ['QUERY', '/api/v1/models', 'GET, HEAD, POST'],
    ['PUT', '/api/v1/workspaces/00000000-0000-4000-8000-000000000000', 'DELETE, GET, HEAD, PATCH, POST'],
    ['DELETE', '/api/v1/plus', 'GET, HEAD, POST'],
  ])('%s %s is a 405 with Allow', async (method, url, allow) => {
    const res = await t.request({ method: method as 'PUT', url, key: team.ownerKey });
    expect(expectProblem(res, 405).code).toBe('method_not_allowed');
    expect(res.headers.allow).toBe(allow);
  });

  it('an unknown path is still a 404', async () => {
    expectProblem(await t.request({ method: 'PUT', url: '/api/v1/nothing-here', key: team.ownerKey }), 404);
    expectProblem(await t.request({ method: 'GET', url: '/api/v1/models/x/y/z', key: team.ownerKey }), 404);
  });
});

describe('URLs the router refuses', () => {
  it('a path parameter past the router limit is a problem+json 414', async () => {
    expectProblem(await t.request({ method: 'GET', url: `/api/v1/models/${'z'.repeat(500)}`, key: team.ownerKey }), 414);
  });

  it('a broken percent-escape is a problem+json 400', async () => {
    expectProblem(await t.request({ method: 'GET', url: '/api/v1/models/%E0%A4%A', key: team.ownerKey }), 400);
  });
});

describe('Plus form fields are checked by their schema', () => {
  it.each([
    [{ title: 'x'.repeat(2_001) }, 'body/title'],
    [{ description: 'x'.repeat(2_001) }, 'body/description'],
    [{ context: 'x'.repeat(200_001) }, 'body/context'],
    [{ isPublic: 'maybe' }, 'body/isPublic'],
    [{ id: 'not-a-uuid' }, 'body/id'],
  ])('%#: a bad field is a 400 naming it', async (fields, path) => {
    const form = multipart([
      ...Object.entries(fields).map(([name, value]) => ({ name, value })),
      { name: 'files', filename: 'a.txt', contentType: 'text/plain', data: Buffer.from('hello') },
    ]);
    const res = await t.request({ method: 'POST', url: '/api/v1/plus', key: team.ownerKey, ...form });
    expect(expectProblem(res, 400).errors).toEqual([expect.objectContaining({ path })]);
  });

  it('an empty id is a new entry, an upper-case id is the same entry, isPublic is a boolean', async () => {
    const first = await t.request({
      method: 'POST',
      url: '/api/v1/plus',
      key: team.ownerKey,
      ...multipart([
        { name: 'id', value: '' },
        { name: 'isPublic', value: 'false' },
        { name: 'title', value: 'T' },
      ]),
    });
    expect(first.statusCode).toBe(200);
    const entry = first.json();
    expect(entry).toMatchObject({ isPublic: false, title: 'T' });
    const again = await t.request({
      method: 'POST',
      url: '/api/v1/plus',
      key: team.ownerKey,
      ...multipart([
        { name: 'id', value: entry.id.toUpperCase() },
        { name: 'title', value: 'T2' },
      ]),
    });
    expect(again.json()).toMatchObject({ id: entry.id, title: 'T2' });
  });
});
