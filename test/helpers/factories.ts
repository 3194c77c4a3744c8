import { randomUUID } from 'node:crypto';
import { Model } from '../../src/modules/models/schema.js';
import type { NewChunk, NewFile } from '../../src/modules/plus/repo.js';
import { Workspace } from '../../src/modules/workspaces/schema.js';
import { expectStatus, type paths } from './api.js';
import type { TestApp } from './app.js';
import { expectShape } from './shape.js';

type JsonBody<Op> = Op extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;
export type ModelBody = JsonBody<paths['/api/v1/models']['post']>;
export type WorkspaceBody = JsonBody<paths['/api/v1/workspaces']['post']>;

/** A team model through the API; `url` defaults to an unroutable loopback port. `system`: an instance-wide model (instance admin). */
export async function createModel(t: TestApp, key: string, body: Partial<ModelBody> = {}, query: { system?: boolean } = {}) {
  const created = expectStatus(
    await t.api(key).POST('/api/v1/models', {
      params: { query },
      body: {
        name: `model-${randomUUID().slice(0, 6)}`,
        apiBase: 'OPENAI',
        url: 'http://127.0.0.1:9/v1',
        baseModel: 'gpt-test',
        contextWindow: 8192,
        ...body,
      },
    }),
    200,
  );
  return expectShape(Model, created);
}

export async function createWorkspace(t: TestApp, key: string, body: Partial<WorkspaceBody> = {}) {
  const created = expectStatus(await t.api(key).POST('/api/v1/workspaces', { body: { name: `ws-${randomUUID().slice(0, 6)}`, ...body } }), 200);
  return expectShape(Workspace, created);
}

/** A text file of `chunks` as an upload hands it to the store (src/modules/plus/store.ts), for tests that write chunks they chose. */
export function newPlusFile(owner: { teamId: string; ownerId: number }, plusId: string, chunks: NewChunk[], filename = `${randomUUID()}.txt`): NewFile {
  return {
    id: randomUUID(),
    teamId: owner.teamId,
    plusId,
    userId: owner.ownerId,
    threadId: null,
    filename,
    mimeType: 'text/plain',
    content: Buffer.from(chunks.map((c) => c.fileData).join('\n\n')),
    tokenSize: chunks.reduce((n, c) => n + c.tokenSize, 0),
    summary: null,
    created: new Date(),
    chunks,
  };
}
