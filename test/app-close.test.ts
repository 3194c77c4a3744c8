import { createHook } from 'node:async_hooks';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Config } from '../src/config.js';
import { expectStatus, multipartBody } from './helpers/api.js';
import { newTeam, startTestApp, testConfig, type TestApp } from './helpers/app.js';
import { createModel, createWorkspace } from './helpers/factories.js';
import { fixtureImage } from './support/image-fixtures.js';

/**
 * A closed app leaves nothing running: after `app.close()` no handle or timer it created is
 * left (the listening server, the sweeps, the embedding worker, the ingest and image worker
 * threads, the database and its thread, the admin socket), so a process that closes its app can
 * exit. Compared by kind and count with what was active before the app was built, which allows
 * what the test runner itself holds.
 */
function activeByKind(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const kind of process.getActiveResourcesInfo()) counts.set(kind, (counts.get(kind) ?? 0) + 1);
  return counts;
}

/** The kinds active now in greater number than in `before`, with how many more. */
function addedSince(before: Map<string, number>): Record<string, number> {
  const added: Record<string, number> = {};
  for (const [kind, n] of activeByKind()) if (n > (before.get(kind) ?? 0)) added[kind] = n - (before.get(kind) ?? 0);
  return added;
}

/**
 * Use what starts threads and connections: an upload (ingest workers) and a turn with an image
 * (image workers). The model's provider does not answer (a refused loopback port), so no
 * keep-alive connection of the process's HTTP client outlives the turn.
 */
async function exercise(t: TestApp): Promise<void> {
  const team = await newTeam(t);
  const text = readFileSync(path.join(import.meta.dirname, 'fixtures', 'gpl-3.txt'));
  const api = t.api(team.ownerKey);
  const upload = multipartBody([
    { name: 'title', value: 'notes' },
    { name: 'files', filename: 'gpl-3.txt', contentType: 'text/plain', data: text },
  ]);
  expectStatus(await api.POST('/api/v1/plus', upload), 200);
  const model = await createModel(t, team.ownerKey, { hasVision: true });
  const ws = await createWorkspace(t, team.ownerKey, { modelIds: [model.id] });
  const image = { mimeType: 'image/png', data: fixtureImage('png').toString('base64') };
  const turn = await api.POST('/api/v1/chat/{workspaceId}/completions', {
    params: { path: { workspaceId: ws.id } },
    body: { prompt: 'What is this?', images: [image] },
  });
  // The image was read and accepted; only the provider failed.
  expect((turn.error as { code?: string } | undefined)?.code, JSON.stringify(turn.error ?? turn.data)).toBe('provider_unreachable');
}

/** Kinds of async resources that keep a process busy (unreferenced ones too, which getActiveResourcesInfo leaves out). */
const LASTING = new Set([
  'Timeout',
  'TCPSERVERWRAP',
  'TCPWRAP',
  'PIPESERVERWRAP',
  'PIPEWRAP',
  'WORKER',
  'MESSAGEPORT',
  'FSEVENTWRAP',
  'PROCESSWRAP',
  'UDPWRAP',
]);

/**
 * Every lasting resource created from now on and not destroyed yet (closed, cleared, fired),
 * with where it was created. Node's own cache of the Date header (a timer of at most a second
 * that every HTTP answer shares) belongs to the process, not to an app; so does undici's clock
 * (one unref'd timer for every undici timer in the process, which stops itself on its next tick,
 * within half a second, once no connection needs it).
 */
function trackResources(): { live(): string[]; stop(): void } {
  const live = new Map<number, string>();
  const hook = createHook({
    init(id, type) {
      if (!LASTING.has(type)) return;
      const stack = new Error().stack ?? '';
      if (type === 'Timeout' && /\(node:internal\/http:|node:_http_outgoing|undici\/lib\/util\/timers\.js/.test(stack)) return;
      live.set(id, `${type}\n${stack.split('\n').slice(2, 10).join('\n')}`);
    },
    destroy(id) {
      live.delete(id);
    },
  }).enable();
  return { live: () => [...live.values()], stop: () => hook.disable() };
}

async function closesCleanly(overrides: Partial<Config>): Promise<void> {
  const before = activeByKind();
  const tracked = trackResources();
  const t = await startTestApp({ ...overrides, embeddings: { ...testConfig().embeddings, workerIntervalMs: 50 } });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  await exercise(t);
  // Both comparisons can fail: while the app runs, its server, timers and workers are counted.
  expect(addedSince(before)).toMatchObject({ TCPServerWrap: 1 });
  const running = new Set(tracked.live().map((r) => r.split('\n')[0]));
  expect([...running]).toEqual(expect.arrayContaining(['TCPSERVERWRAP', 'Timeout', 'WORKER']));
  await t.close();
  // Destroy hooks run on a later turn of the event loop.
  await new Promise((resolve) => setImmediate(resolve));
  await new Promise((resolve) => setImmediate(resolve));
  tracked.stop();
  expect(tracked.live()).toEqual([]);
  expect(addedSince(before)).toEqual({});
}

describe('closing the app', () => {
  it('leaves no handle, timer or worker behind', async () => {
    await closesCleanly({});
  }, 120_000);

  // The embedded database on disk, as `npm start` runs it: in its own thread, with the admin socket.
  it.skipIf(Boolean(process.env.ATRIUM_TEST_DATABASE_URL))(
    'leaves none behind with the embedded database in its thread',
    async () => {
      await closesCleanly({ databaseUrl: null, embeddedDbThread: true });
    },
    120_000,
  );
});
