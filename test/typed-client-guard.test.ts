/**
 * The test files moved onto the typed client (test/helpers/api.ts) stay on it: a hand-typed API
 * URL (`url: '/api/…'`, `url: \`/v1/…\``, `fetch(\`${baseUrl}/api/…\`)`) in one of them needs a
 * `// raw:` comment on its line or the line before, saying why the document cannot type it (an
 * invalid body, an unknown path). Add a file to MIGRATED once it is moved.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const MIGRATED = [
  'test/security/headers.test.ts',
  'test/security/instance-key.test.ts',
  'test/security/sign-in.test.ts',
  'test/security/small-leaks.test.ts',
  'test/security/team-scoped-ids.test.ts',
  'test/api/workspaces.test.ts',
  'test/api/typed-client.test.ts',
  'test/api/teams.test.ts',
  'test/api/models.test.ts',
  'test/api/plus.test.ts',
  'test/api/saved-prompts.test.ts',
  'test/api/user-roles.test.ts',
  'test/api/model-connection.test.ts',
  'test/api/prompt-logs.test.ts',
  'test/api/chat-search.test.ts',
  'test/api/usage.test.ts',
  'test/api/chat-export.test.ts',
  'test/api/chat.test.ts',
  'test/api/budgets.test.ts',
  'test/api/retention.test.ts',
  'test/api/chat-share.test.ts',
  'test/api/chat-versions.test.ts',
  'test/api/chat-history-paging.test.ts',
  'test/api/plus-evaluation.test.ts',
  'test/api/mcp-servers.test.ts',
  'test/api/v1-context.test.ts',
  'test/api/audit.test.ts',
  'test/api/scim.test.ts',
  'test/api/auth.test.ts',
  'test/web-serving.test.ts',
  'test/embeddings/hybrid.test.ts',
  'test/retrieval/transparency.test.ts',
  'test/ingest/ocr-uploads.test.ts',
  'test/embeddings/rerank.test.ts',
  'test/api/chat-images.test.ts',
  'test/api/chat-image-generation.test.ts',
  'test/api/compression.test.ts',
  'test/ops/metrics.test.ts',
  'test/ingest/hostile-uploads.test.ts',
  'test/retrieval/lexical-index.test.ts',
  'test/retrieval/terms.test.ts',
  'test/api/large-documents.test.ts',
  'test/ops/tracing.test.ts',
  'test/ops/backup.test.ts',
  'test/ingest/archive-layout.test.ts',
  'test/api/chat-turns.test.ts',
  'test/api/oidc.test.ts',
  'test/api/oidc-refusals.test.ts',
  'test/helpers/oidc.ts',
  'test/api/chat-tools.test.ts',
  'test/api/v1-helpers.ts',
  'test/api/v1-errors.test.ts',
  'test/api/v1-models.test.ts',
  'test/api/v1-tools.test.ts',
  'test/providers/context-window.test.ts',
  'test/providers/window-probe.test.ts',
  'test/providers/errors-api.test.ts',
  'test/embeddings/worker.test.ts',
  'test/api/auth-bootstrap.test.ts',
  'test/app-close.test.ts',
  'test/api/event-loop-guard.test.ts',
  'test/api/v1.test.ts',
  'test/api/sse-framing.test.ts',
];

const ROOT = path.join(import.meta.dirname, '..');
const HAND_TYPED = /\burl:\s*['"`]\/(api|v1)\/|\$\{baseUrl\}\/(api|v1)\//;

/** `file:line` of every hand-typed API URL without a `// raw:` reason. */
export function unmarkedUrls(file: string, text: string): string[] {
  const lines = text.split('\n');
  return lines.flatMap((line, i) => (HAND_TYPED.test(line) && !`${lines[i - 1] ?? ''}\n${line}`.includes('// raw:') ? [`${file}:${i + 1}`] : []));
}

describe('migrated test files use the typed client', () => {
  it('finds an unmarked URL and accepts a marked one', () => {
    expect(unmarkedUrls('x', "await t.request({ method: 'GET', url: '/api/v1/me' });")).toEqual(['x:1']);
    expect(unmarkedUrls('x', 'await t.request({ url: `/v1/models/${id}` });')).toEqual(['x:1']);
    expect(unmarkedUrls('x', 'await fetch(`${baseUrl}/api/v1/me`);')).toEqual(['x:1']);
    expect(unmarkedUrls('x', "// raw: an unknown path\nawait t.request({ method: 'GET', url: '/api/v1/nothing' });")).toEqual([]);
    expect(unmarkedUrls('x', "await t.request({ url: '/healthz' });\nawait t.api(key).GET('/api/v1/me');")).toEqual([]);
  });

  it.each(MIGRATED)('%s has no hand-typed API URL without a reason', (file) => {
    expect(unmarkedUrls(file, readFileSync(path.join(ROOT, file), 'utf8'))).toEqual([]);
  });
});
