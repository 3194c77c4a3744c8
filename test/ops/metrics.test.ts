import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import parsePrometheusTextFormat, { type PromFamily } from 'parse-prometheus-text-format';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectStatus, multipartBody } from '../helpers/api.js';
import { expectProblem, newTeam, startTestApp, type TestApp } from '../helpers/app.js';
import { createModel, createWorkspace } from '../helpers/factories.js';
import { useStandIn } from '../support/use-standin.js';

/**
 * GET /metrics: who may read it, and that its numbers move with traffic, read back through a
 * Prometheus text-format parser. Counters are compared before and after (other tests' traffic in
 * this process only adds), never against absolute values.
 */
const TOKEN = 'metrics-token-0123456789abcdef';
const s = useStandIn();
let t: TestApp;

beforeAll(async () => {
  t = await startTestApp({ metricsToken: TOKEN });
});
afterAll(async () => {
  await t?.close();
});

/**
 * The scrape, parsed twice: as it is (the families and their types), and with each histogram
 * declared untyped, so that its `_count`, `_sum` and `_bucket` series come out as families of
 * their own with their labels (the parser keeps labels of plain series only; of a histogram it
 * keeps one unlabelled set of buckets).
 */
async function scrape(): Promise<PromFamily[]> {
  const res = await t.request({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
  expect(res.statusCode).toBe(200);
  expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
  const families = parsePrometheusTextFormat(res.body);
  const series = parsePrometheusTextFormat(res.body.replace(/^# TYPE (\S+) histogram$/gm, '# TYPE $1 untyped'));
  return [...families, ...series.filter((f) => !families.some((g) => g.name === f.name))];
}

function family(fams: PromFamily[], name: string): PromFamily {
  const f = fams.find((x) => x.name === name);
  if (!f) throw new Error(`no metric ${name}`);
  return f;
}

/** The value of a counter/gauge series whose labels include `labels` (summed over the rest); of a histogram, its count. */
function value(fams: PromFamily[], name: string, labels: Record<string, string> = {}): number {
  if (family(fams, name).type === 'HISTOGRAM') return seriesSum(fams, `${name}_count`, labels);
  return seriesSum(fams, name, labels);
}

/** A histogram's series, read untyped, come as one family per label set (none before its first observation). */
function seriesSum(fams: PromFamily[], name: string, labels: Record<string, string>): number {
  return fams
    .filter((f) => f.name === name)
    .flatMap((f) => f.metrics)
    .filter((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v))
    .reduce((s, m) => s + Number(m.value ?? 0), 0);
}

async function setup(price?: number) {
  const team = await newTeam(t);
  const model = await createModel(t, team.ownerKey, { url: s.standIn.openaiBaseUrl, ...(price ? { chatCredits: price } : {}) });
  const ws = await createWorkspace(t, team.ownerKey, { modelIds: [model.id] });
  return { team, model, ws };
}

describe('GET /metrics access', () => {
  it('is 401 without a token or with a wrong one (problem+json, nothing else said)', async () => {
    for (const authorization of [undefined, 'Bearer wrong-token-0123456789abcdef', `Basic ${TOKEN}`, `Bearer ${TOKEN}x`]) {
      const res = await t.request({ method: 'GET', url: '/metrics', headers: authorization ? { authorization } : {} });
      expect(expectProblem(res, 401).code).toBe('unauthorized');
      expect(res.body).not.toContain('atrium_');
    }
  });

  it('is 404 when METRICS_TOKEN is not set', async () => {
    const off = await startTestApp();
    try {
      const res = await off.request({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
      expectProblem(res, 404);
    } finally {
      await off.close();
    }
  });
});

describe('metrics move with traffic', () => {
  it('a chat turn counts the request by route pattern, the turn, its tokens and credits, and the provider call', async () => {
    const { team, ws } = await setup(1000);
    const before = await scrape();
    const secret = `user text ${randomUUID()}`;
    const res = await t
      .api(team.ownerKey)
      .POST('/api/v1/chat/{workspaceId}/completions/stream', { params: { path: { workspaceId: ws.id } }, body: { prompt: secret }, parseAs: 'text' });
    const threadId = /"threadId":"([^"]+)"/.exec(expectStatus(res, 200) as unknown as string)?.[1];
    expect(threadId).toBeTruthy();
    const after = await scrape();

    expect(value(after, 'atrium_chat_turns_total', { outcome: 'ok' })).toBe(value(before, 'atrium_chat_turns_total', { outcome: 'ok' }) + 1);
    const prompt = value(after, 'atrium_tokens_total', { kind: 'prompt' }) - value(before, 'atrium_tokens_total', { kind: 'prompt' });
    const completion = value(after, 'atrium_tokens_total', { kind: 'completion' }) - value(before, 'atrium_tokens_total', { kind: 'completion' });
    expect(prompt).toBeGreaterThan(0);
    expect(completion).toBeGreaterThan(0);
    expect(value(after, 'atrium_credits_total')).toBeGreaterThan(value(before, 'atrium_credits_total'));

    const route = '/api/v1/chat/:workspaceId/completions/stream';
    expect(value(after, 'atrium_http_requests_total', { method: 'POST', route, status: '200' })).toBe(
      value(before, 'atrium_http_requests_total', { method: 'POST', route, status: '200' }) + 1,
    );
    expect(value(after, 'atrium_http_request_duration_seconds', { route })).toBe(value(before, 'atrium_http_request_duration_seconds', { route }) + 1);

    // The provider call: by the base URL's origin only (the stand-in's path is dropped), timed, first token too.
    const origin = new URL(s.standIn.openaiBaseUrl).origin;
    expect(family(after, 'atrium_provider_request_duration_seconds').type).toBe('HISTOGRAM');
    expect(value(after, 'atrium_provider_request_duration_seconds', { api_base: origin })).toBe(
      value(before, 'atrium_provider_request_duration_seconds', { api_base: origin }) + 1,
    );
    expect(value(after, 'atrium_time_to_first_token_seconds', { api_base: origin })).toBe(
      value(before, 'atrium_time_to_first_token_seconds', { api_base: origin }) + 1,
    );

    // Process defaults and the event loop's lag are there.
    expect(value(after, 'process_cpu_seconds_total')).toBeGreaterThan(0);
    expect(family(after, 'atrium_event_loop_lag_seconds').type).toBe('GAUGE');

    // No label value carries the user's text, the thread's id, the workspace's id or a raw URL.
    for (const f of after) {
      for (const m of f.metrics) {
        for (const v of Object.values(m.labels ?? {})) {
          expect(v).not.toContain('user text');
          expect(v).not.toContain(threadId!);
          expect(v).not.toContain(ws.id);
          expect(v).not.toContain(team.teamId);
        }
      }
    }
  });

  it('a budget refusal moves atrium_budget_refusals_total and no turn', async () => {
    const { team, ws } = await setup(1000);
    const api = t.api(team.ownerKey);
    expectStatus(await api.POST('/api/v1/budgets', { body: { scope: 'team', scopeId: team.teamId, period: 'day', credits: 1 } }), 201);
    const before = await scrape();
    const res = await api.POST('/api/v1/chat/{workspaceId}/completions', {
      params: { path: { workspaceId: ws.id } },
      body: { prompt: 'hello', maxTokens: 50 },
    });
    expect(expectProblem(res, 429).code).toBe('budget_exceeded');
    const after = await scrape();
    expect(value(after, 'atrium_budget_refusals_total')).toBe(value(before, 'atrium_budget_refusals_total') + 1);
    const turns = (f: PromFamily[]) => ['ok', 'error', 'interrupted'].reduce((s, outcome) => s + value(f, 'atrium_chat_turns_total', { outcome }), 0);
    expect(turns(after)).toBe(turns(before));
    expect(value(after, 'atrium_http_requests_total', { route: '/api/v1/chat/:workspaceId/completions', status: '429' })).toBe(
      value(before, 'atrium_http_requests_total', { route: '/api/v1/chat/:workspaceId/completions', status: '429' }) + 1,
    );
  });

  it('uploaded files count by outcome: a text file ok, an executable unsupported_type', async () => {
    const team = await newTeam(t);
    const before = await scrape();
    const upload = (filename: string, contentType: string, data: Buffer) =>
      t.api(team.ownerKey).POST(
        '/api/v1/plus',
        multipartBody([
          { name: 'title', value: 'metrics' },
          { name: 'files', filename, contentType, data },
        ]),
      );
    expectStatus(await upload('notes.txt', 'text/plain', Buffer.from('Plain notes about the quarterly plan.\n')), 200);
    expectProblem(await upload('tool.exe', 'application/octet-stream', Buffer.from([0x4d, 0x5a, 0x90, 0, 3, 0, 0, 0, 4, 0, 0, 0, 0xff, 0xff, 0, 0])), 415);
    const after = await scrape();
    expect(value(after, 'atrium_ingest_files_total', { outcome: 'ok' })).toBe(value(before, 'atrium_ingest_files_total', { outcome: 'ok' }) + 1);
    expect(value(after, 'atrium_ingest_files_total', { outcome: 'unsupported_type' })).toBe(
      value(before, 'atrium_ingest_files_total', { outcome: 'unsupported_type' }) + 1,
    );
  });

  it('an unmatched URL is counted under one label, not its path', async () => {
    const before = await scrape();
    const path = `/api/v1/no-such-thing/${randomUUID()}`;
    // raw: a path the document does not have, on purpose
    await t.request({ method: 'GET', url: path, key: null });
    const after = await scrape();
    expect(value(after, 'atrium_http_requests_total', { route: '(unmatched)' })).toBeGreaterThan(
      value(before, 'atrium_http_requests_total', { route: '(unmatched)' }),
    );
    for (const m of family(after, 'atrium_http_requests_total').metrics) expect(m.labels?.route).not.toContain('no-such-thing');
  });
});

describe('the Grafana dashboard (ops/grafana/atrium.json)', () => {
  it('queries only metrics this server exposes', async () => {
    const dashboard = readFileSync(path.join(import.meta.dirname, '..', '..', 'ops', 'grafana', 'atrium.json'), 'utf8');
    const used = new Set([...dashboard.matchAll(/\b((?:atrium|process)_[a-z_]+)/g)].map((m) => m[1]!.replace(/_(bucket|sum|count)$/, '')));
    expect(used.size).toBeGreaterThan(8);
    const names = new Set((await scrape()).map((f) => f.name));
    for (const name of used) expect(names, name).toContain(name);
  });
});
