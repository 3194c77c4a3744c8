/**
 * What a generated client sees must be what the server does. This generates the typed
 * client the web app uses (openapi-typescript → openapi-fetch) from /openapi.json, compiles a
 * small program against it with tsc — with no casts and no optional parameter filled in — and
 * runs it against this server.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { newTeam, startTestApp, type TestApp } from '../helpers/app.js';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');

// The program a client author would write. `@ts-expect-error` lines prove the document is strict
// where it must be: tsc fails if those calls compile.
const PROGRAM = `
import createClient from 'openapi-fetch';
import type { components, paths } from './api.js';

type Problem = components['schemas']['Problem'];
type StreamEvent = components['schemas']['ChatStreamEvent'];

const [baseUrl, key] = process.argv.slice(2) as [string, string];
const client = createClient<paths>({ baseUrl, headers: { authorization: \`Bearer \${key}\` } });

function fail(what: string, detail: unknown): never {
  throw new Error(\`\${what}: \${JSON.stringify(detail)}\`);
}

/** What a streaming client does with each event's data. */
export function describeEvent(e: StreamEvent): string {
  switch (e.type) {
    case 'start': return e.threadId;
    case 'sources': return String(e.sources.length);
    case 'delta': return e.content;
    case 'tool_call': return \`\${e.name}(\${e.arguments})\`;
    case 'tool_result': return \`\${e.id} \${e.ok} \${e.content}\`;
    case 'image': return \`\${e.mimeType} \${e.width}x\${e.height}\`;
    case 'done': return \`\${e.finishReason} \${e.usage.totalTokens}\`;
    case 'error': return \`\${e.status} \${e.code}\`;
  }
}

const me = await client.GET('/api/v1/me');
if (!me.data) fail('me', me.error);
const teamName: string = me.data.team.name;

// Optional query parameters are optional: none is given here.
const models = await client.GET('/api/v1/models');
if (!models.data) fail('models', models.error);
const modelsAll = await client.GET('/api/v1/models/all', { params: { query: { includeSystem: true } } });
if (!modelsAll.data) fail('models/all', modelsAll.error);

// @ts-expect-error a model cannot be created without a name
void client.POST('/api/v1/models', { body: { baseModel: 'x' } });
const created = await client.POST('/api/v1/models', { body: { name: 'typed', apiBase: 'OPENAI', baseModel: 'm', contextWindow: 8192 } });
if (!created.data) fail('create model', created.error);
const contextWindow: number | null = created.data.contextWindow;

const ws = await client.POST('/api/v1/workspaces', { body: { name: 'typed ws', modelIds: [created.data.id] } });
if (!ws.data) fail('create workspace', ws.error);
const workspaceId = ws.data.id;
const prompts = await client.GET('/api/v1/chat/{workspaceId}/sample-prompts', { params: { path: { workspaceId } } });
if (!prompts.data) fail('sample prompts', prompts.error);
const threads = await client.GET('/api/v1/chat/{workspaceId}/history', { params: { path: { workspaceId } } });
if (!threads.data) fail('history', threads.error);
const page = await client.GET('/api/v1/chat/prompt-logs/paged');
if (!page.data) fail('prompt logs', page.error);
const plus = await client.GET('/api/v1/plus');
if (!plus.data) fail('plus', plus.error);

// Errors are typed problem details.
const missing = await client.GET('/api/v1/models/{modelId}', { params: { path: { modelId: '00000000-0000-4000-8000-000000000000' } } });
if (missing.data || missing.response.status !== 404) fail('missing model', missing.response.status);
const problem: Problem = missing.error;
const bad = await client.GET('/api/v1/chat/prompt-logs/paged', { params: { query: { size: 5000 } } });
if (!bad.error) fail('size 5000', bad.data);

console.log(JSON.stringify({
  teamName,
  models: models.data.length,
  contextWindow,
  samplePrompts: prompts.data.length,
  threads: threads.data.length,
  totalElements: page.data.totalElements,
  plus: plus.data.length,
  missing: [problem.status, problem.code, missing.response.headers.get('content-type')],
  bad: [bad.error.status, bad.error.code],
  event: describeEvent({ type: 'delta', content: 'hi' }),
}));
`;

const TSCONFIG = {
  compilerOptions: {
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    lib: ['ES2023', 'DOM'],
    types: ['node'],
    strict: true,
    noUncheckedIndexedAccess: true,
    exactOptionalPropertyTypes: true,
    skipLibCheck: false,
    outDir: 'out',
  },
  files: ['api.ts', 'client.ts'],
};

let t: TestApp;
let dir: string;
beforeAll(async () => {
  t = await startTestApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  // Inside the work tree, so that the program resolves openapi-fetch from its node_modules.
  mkdirSync(path.join(root, 'node_modules/.cache'), { recursive: true });
  dir = mkdtempSync(path.join(root, 'node_modules/.cache/typed-client-'));
});
afterAll(async () => {
  await t.close();
  rmSync(dir, { recursive: true, force: true });
});

it('generates a typed client that compiles without workarounds and talks to the server', { timeout: 180_000 }, async () => {
  const doc = (await t.request({ method: 'GET', url: '/openapi.json' })).json();
  writeFileSync(path.join(dir, 'api.ts'), astToString(await openapiTS(doc)));
  writeFileSync(path.join(dir, 'client.ts'), PROGRAM);
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
  writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify(TSCONFIG));

  const tsc = path.join(root, 'node_modules/typescript/bin/tsc');
  const compiled = await run(process.execPath, [tsc, '-p', dir]).catch((err: { stdout?: string }) => {
    throw new Error(`the typed client does not compile:\n${err.stdout ?? String(err)}`);
  });
  expect(compiled.stdout).toBe('');

  const team = await newTeam(t);
  const address = t.app.server.address();
  if (!address || typeof address === 'string') throw new Error('not listening');
  const out = await run(process.execPath, [path.join(dir, 'out/client.js'), `http://127.0.0.1:${address.port}`, team.ownerKey]);
  const result = JSON.parse(out.stdout);
  expect(result).toMatchObject({
    models: 0,
    contextWindow: 8192,
    samplePrompts: 6,
    threads: 0,
    totalElements: 0,
    plus: 0,
    missing: [404, 'not_found', 'application/problem+json; charset=utf-8'],
    bad: [400, 'validation_failed'],
    event: 'hi',
  });
});
