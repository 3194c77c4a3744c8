import { afterAll, beforeAll, expect, it } from 'vitest';
import { Plus } from '../../src/modules/plus/schema.js';
import { expectStatus, multipartBody } from '../helpers/api.js';
import { newTeam, startTestApp, type TestApp } from '../helpers/app.js';
import { createModel } from '../helpers/factories.js';
import { expectShape } from '../helpers/shape.js';
import { useStandIn } from '../support/use-standin.js';

/** The worker as it runs in production: on its timer and after uploads, stopped by app.close(). */
const s = useStandIn();
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ embeddings: { workerIntervalMs: 50, batchSize: 8, retryBaseMs: 0, retryMaxMs: 0, claimMs: 60_000 } });
});
afterAll(() => t.close());

/** Poll the API until `done` (a bounded wait, not a timing assertion). */
async function until<T>(read: () => Promise<T>, done: (v: T) => boolean): Promise<T> {
  let v = await read();
  for (let i = 0; i < 400 && !done(v); i++) {
    await new Promise((r) => setTimeout(r, 25));
    v = await read();
  }
  return v;
}

it('embeds uploaded files in the background, and retries a failure once the provider recovers', async () => {
  const team = await newTeam(t);
  const emb = await createModel(t, team.ownerKey, { ...s.modelBody('OPENAI', { baseModel: 'embed-bg' }), kind: 'embedding' });
  s.standIn.set({ failEmbeddings: 500 });
  const api = t.api(team.ownerKey);
  expectStatus(await api.PUT('/api/v1/embeddings/settings', { body: { embeddingModelId: emb.id } }), 200);
  const body = multipartBody([
    { name: 'title', value: 'bg' },
    { name: 'files', filename: 'a.txt', contentType: 'text/plain', data: Buffer.from('Reimbursement within thirty days.') },
    { name: 'files', filename: 'b.txt', contentType: 'text/plain', data: Buffer.from('The office opens at nine.') },
  ]);
  const { id } = expectStatus(await api.POST('/api/v1/plus', body), 200);
  const read = async () => expectShape(Plus, expectStatus(await api.GET('/api/v1/plus/{plusId}', { params: { path: { plusId: id } } }), 200));

  const failed = await until(read, (p) => p.files.every((f) => f.embedding?.status === 'failed'));
  expect(failed.files.map((f) => f.embedding?.status)).toEqual(['failed', 'failed']);
  s.standIn.set({ failEmbeddings: null });
  const ready = await until(read, (p) => p.files.every((f) => f.embedding?.status === 'ready'));
  expect(ready.files.map((f) => f.embedding?.status)).toEqual(['ready', 'ready']);
  expect(ready.files.every((f) => f.embedding!.attempts >= 2 && f.embedding!.error === null)).toBe(true);
});
