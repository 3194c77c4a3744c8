/**
 * The OpenAPI document states what the server does. CI also lints it with Redocly
 * (`npm run lint:openapi`); these are the properties a generated client depends on.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

let t: TestApp;
let doc: Json;
const operations: Array<{ id: string; op: Json }> = [];
beforeAll(async () => {
  t = await startTestApp();
  doc = (await t.request({ method: 'GET', url: '/openapi.json' })).json();
  for (const [path, item] of Object.entries(doc.paths as Record<string, Json>)) {
    for (const [method, op] of Object.entries(item)) operations.push({ id: `${method.toUpperCase()} ${path}`, op });
  }
});
afterAll(() => t.close());

it('names, summarises and tags every operation, with unique operationIds and defined tags', () => {
  const tags = new Set((doc.tags as Json[]).map((tag) => tag.name));
  for (const { id, op } of operations) {
    expect(op.operationId, id).toMatch(/^[a-z][A-Za-z]+$/);
    expect(op.summary, id).toBeTruthy();
    for (const tag of op.tags) expect(tags.has(tag), `${id} tag ${tag}`).toBe(true);
  }
  expect(new Set(operations.map((o) => o.op.operationId)).size).toBe(operations.length);
  expect(doc.servers).toEqual([expect.objectContaining({ url: '/' })]);
});

it('declares every error answer as problem+json with the Problem schema (OpenAI\u2019s error shape under /v1)', () => {
  let openai = 0;
  for (const { id, op } of operations) {
    const errors = Object.entries(op.responses as Record<string, Json>).filter(([status]) => Number(status) >= 400);
    expect(errors.length, id).toBeGreaterThan(0);
    const [type, schema] = id.split(' ')[1]!.startsWith('/v1/') ? ['application/json', 'OpenAIError'] : ['application/problem+json', 'Problem'];
    if (schema === 'OpenAIError') openai++;
    for (const [status, res] of errors) {
      expect(Object.keys(res.content), `${id} ${status}`).toEqual([type]);
      expect(res.content[type].schema, `${id} ${status}`).toEqual({ $ref: `#/components/schemas/${schema}` });
    }
  }
  expect(openai).toBe(4);
});

it('marks query parameters with a default optional, and caps every integer parameter', () => {
  const optional = ['system', 'includeSystem', 'page', 'size', 'limit', 'showPublic', 'summarize'];
  let seen = 0;
  for (const { id, op } of operations) {
    for (const p of (op.parameters ?? []) as Json[]) {
      if (optional.includes(p.name)) {
        seen++;
        expect(p.required, `${id} ${p.name}`).toBe(false);
      }
      if (p.schema.type === 'integer') expect(p.schema.maximum, `${id} ${p.name}`).toBeLessThanOrEqual(2_147_483_647);
    }
  }
  expect(seen).toBeGreaterThanOrEqual(optional.length);
});

it('requires name to create a model but not to change one', () => {
  const create = doc.paths['/api/v1/models'].post.requestBody.content['application/json'].schema;
  const update = doc.paths['/api/v1/models/{modelId}'].patch.requestBody.content['application/json'].schema;
  expect(create.required).toEqual(['name']);
  expect(update.required ?? []).toEqual([]);
});

it('documents the Plus form with its limits, and the stream events', () => {
  const form = doc.paths['/api/v1/plus'].post.requestBody.content['multipart/form-data'].schema;
  expect(form.properties).toMatchObject({
    id: { format: 'uuid' },
    title: { maxLength: 2_000 },
    description: { maxLength: 2_000 },
    context: { maxLength: 200_000 },
    isPublic: { type: 'boolean' },
    files: { type: 'array' },
  });
  const stream = doc.paths['/api/v1/chat/{workspaceId}/completions/stream'].post;
  expect(stream.responses['200'].content['text/event-stream'].schema).toEqual({ $ref: '#/components/schemas/ChatStreamEvent' });
  const events = (doc.components.schemas.ChatStreamEvent.anyOf as Json[]).map((e) => e.properties.type.enum?.[0] ?? e.properties.type.const);
  expect(events).toEqual(['start', 'sources', 'delta', 'tool_call', 'tool_result', 'image', 'done', 'error']);
  expect(stream.description).toMatch(/heartbeat/);
});

it('never requires a body field that has a default (the server fills it in, so a client may leave it out)', () => {
  const resolve = (s: Json): Json => (s.$ref ? doc.components.schemas[(s.$ref as string).split('/').at(-1)!] : s);
  const wrong: string[] = [];
  let withDefault = 0;
  const walk = (schema: Json, at: string): void => {
    const s = resolve(schema);
    for (const [name, prop] of Object.entries((s.properties ?? {}) as Record<string, Json>)) {
      if (resolve(prop).default !== undefined) {
        withDefault++;
        if ((s.required ?? []).includes(name)) wrong.push(`${at}.${name}`);
      }
      walk(prop, `${at}.${name}`);
    }
    for (const sub of [...((s.anyOf ?? []) as Json[]), ...((s.oneOf ?? []) as Json[]), ...((s.allOf ?? []) as Json[])]) walk(sub, at);
  };
  for (const { id, op } of operations) {
    for (const [type, media] of Object.entries((op.requestBody?.content ?? {}) as Record<string, Json>)) walk(media.schema, `${id} ${type}`);
  }
  expect(withDefault).toBeGreaterThan(1);
  expect(wrong).toEqual([]);
});
