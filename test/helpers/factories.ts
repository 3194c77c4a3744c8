import { randomUUID } from 'node:crypto';
import { Model } from '../../src/modules/models/schema.js';
import { Workspace } from '../../src/modules/workspaces/schema.js';
import type { TestApp } from './app.js';
import { expectShape } from './shape.js';

/** A team model through the API; `url` defaults to an unroutable loopback port. */
export async function createModel(t: TestApp, key: string, body: Record<string, unknown> = {}, query = '') {
  const res = await t.request({
    method: 'POST',
    url: `/api/v1/models${query}`,
    key,
    payload: {
      name: `model-${randomUUID().slice(0, 6)}`,
      apiBase: 'OPENAI',
      url: 'http://127.0.0.1:9/v1',
      baseModel: 'gpt-test',
      contextWindow: 8192,
      ...body,
    },
  });
  if (res.statusCode !== 200) throw new Error(`createModel: ${res.statusCode} ${res.body}`);
  expectShape(Model, res.json());
  return res.json() as { id: string; name: string } & Record<string, unknown>;
}

export async function createWorkspace(t: TestApp, key: string, body: Record<string, unknown> = {}) {
  const res = await t.request({ method: 'POST', url: '/api/v1/workspaces', key, payload: { name: `ws-${randomUUID().slice(0, 6)}`, ...body } });
  if (res.statusCode !== 200) throw new Error(`createWorkspace: ${res.statusCode} ${res.body}`);
  expectShape(Workspace, res.json());
  return res.json() as { id: string; models: Array<Record<string, unknown>> } & Record<string, unknown>;
}
