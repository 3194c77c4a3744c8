/**
 * Gateway overhead: Atrium in front of the stand-in provider, against two references measured
 * in the same run on the same machine:
 *   A. direct  — the same OpenAI chat-completions body POSTed straight to the stand-in;
 *   B. bare    — a minimal Fastify app with one route that forwards the body to the stand-in
 *                with fetch and returns its JSON (no auth, no database).
 * Atrium is measured on PGlite (on-disk DATA_DIR, as in production) and on PostgreSQL.
 *
 * Every server runs in its own child process (bench/lib/server-host.ts); the load generator
 * (node:http, keep-alive) runs in this process. Run alone: npx tsx bench/gateway.ts
 */
import { randomUUID } from 'node:crypto';
import { ADMIN_KEY } from '../test/helpers/app.js';
import { ServerProcess } from './lib/child.js';
import { HttpClient, target, type HttpResult, type Target } from './lib/http.js';
import { closedLoop, sequential } from './lib/load.js';
import { createThrowawayDb, isDb } from './lib/pg.js';
import { startPortkey, type Portkey } from './lib/portkey.js';
import { renderSection, type Row, type Section, type TargetRow } from './lib/report.js';
import { round, summarize, verdict } from './lib/stats.js';
import { stopwatch } from './lib/timer.js';

/** BENCH_QUICK=1: a few rounds of each case, to check the bench runs (numbers meaningless). */
const QUICK = process.env.BENCH_QUICK === '1';
const LATENCY_ROUNDS = QUICK ? 12 : 400;
const STREAM_ROUNDS = QUICK ? 6 : 300;
const PHASE_ROUNDS = QUICK ? 6 : 300;
const WARMUP = QUICK ? 6 : 150;
const CONCURRENCY = 64;
const THROUGHPUT_MS = QUICK ? 300 : 6_000;
const THROUGHPUT_WARMUP_MS = QUICK ? 100 : 1_000;
/** Follow-up turns go into a thread of at most this many turns, then a new thread starts (unmeasured). */
const FOLLOW_UPS_PER_THREAD = 8;
const UPSTREAM_DELAY_MS = 20;

const TARGET_ADDED_P50_MS = 1;
const TARGET_THROUGHPUT_RATIO = 0.5;

/** Questions a team might ask; each Atrium request sends one as `prompt` (and opens a new thread). */
export const PROMPTS = [
  'What does the retention policy say about archived workspaces?',
  'Summarise the onboarding checklist for new engineers in three bullet points.',
  'Which regions does the disaster-recovery plan cover, and what is the recovery time objective?',
  'Draft a short reply to a customer asking why their invoice doubled this month.',
  'How do I rotate the API keys for the staging environment without downtime?',
  'List the open questions from last week’s architecture review.',
  'Explain the difference between the team and the private context settings.',
  'What are the licence obligations when we ship a modified copy of the library?',
  'Give me a checklist for reviewing a pull request that touches the billing code.',
  'Translate the release notes headline into French and German.',
  'Which services depend on the message queue, and what happens if it is down?',
  'Write a two-sentence status update for the migration project.',
];

type Json = Record<string, unknown>;

interface Targets {
  direct: Target;
  bare: Target;
  atrium: Target;
  atriumStream: Target;
  /** the OpenAI-compatible route, and the `model` naming the workspace */
  v1: Target;
  v1Model: string;
  key: string;
  /** usage: the same workspace setup in a team with a budget and a rate limit */
  budgeted?: { target: Target; key: string };
  /** the peer: Portkey's gateway forwarding the direct body to the stand-in */
  portkey?: { target: Target; headers: Record<string, string> };
}

function ok(r: HttpResult, mustContain?: string): number | null {
  if (r.status !== 200) return null;
  if (mustContain && !r.body.includes(mustContain)) return null;
  return r.ms;
}

/** The provider body Atrium sent, with the user's text replaced by `prompt`. */
function providerBody(recorded: Json, prompt: string): string {
  const messages = (recorded.messages as Array<{ role: string; content: string }>).map((m) => (m.role === 'user' ? { ...m, content: prompt } : m));
  return JSON.stringify({ ...recorded, messages });
}

const DIRECT_FIRST_CONTENT = '"delta":{"content":"';
const PORTKEY_PATH = 'Portkey gateway (peer; stores nothing)';
const ATRIUM_FIRST_DELTA = 'event: delta';

export async function setUpAtrium(client: HttpClient, base: string, openaiBaseUrl: string): Promise<{ key: string; workspaceId: string }> {
  const team = await client.json<{ apiKey: string }>(
    target(`${base}/api/v1/teams`),
    { name: `bench-${randomUUID().slice(0, 8)}`, ownerName: 'Bench Owner', ownerEmail: `bench-${randomUUID()}@example.com` },
    { key: ADMIN_KEY, expect: 201 },
  );
  const model = await client.json<{ id: string }>(
    target(`${base}/api/v1/models`),
    { name: 'standin-gpt', apiBase: 'OPENAI', url: openaiBaseUrl, baseModel: 'gpt-test', contextWindow: 8192, apiKey: 'sk-bench-0123456789' },
    { key: team.apiKey },
  );
  const ws = await client.json<{ id: string }>(target(`${base}/api/v1/workspaces`), { name: 'bench workspace', modelIds: [model.id] }, { key: team.apiKey });
  return { key: team.apiKey, workspaceId: ws.id };
}

// ---- usage: a team with a credit budget and a rate limit on every request ------------
/** Budget check cost target: a call under a budget and a rate limit vs one under none, p50, same run. */
const TARGET_BUDGET_P50_MS = 0.2;

/** A second team like setUpAtrium's, whose every call reserves against a team budget and a rate limit that never run out. */
export async function setUpBudgeted(client: HttpClient, base: string, openaiBaseUrl: string): Promise<{ key: string; workspaceId: string }> {
  const team = await setUpAtrium(client, base, openaiBaseUrl);
  const me = await client.json<{ team: { id: string } }>(target(`${base}/api/v1/me`), undefined, { method: 'GET', key: team.key });
  await client.json(
    target(`${base}/api/v1/budgets`),
    { scope: 'team', scopeId: me.team.id, period: 'month', credits: 1e12, requestsPerMinute: 1e9 },
    { key: team.key, expect: 201 },
  );
  return team;
}
// ---- end usage -----------------------------------------------------------------------------

interface BackendResult {
  latency: Row[];
  throughput: Row[];
  streams: Row[];
  phases: Row[];
  notes: string[];
}

async function measureBackend(label: string, standIn: ServerProcess, atrium: ServerProcess, t: Targets): Promise<BackendResult> {
  const c1 = new HttpClient(1);
  const auth = { authorization: `Bearer ${t.key}` };
  const notes: string[] = [];
  try {
    // One Atrium call of each kind, to copy the exact provider bodies it sends.
    const first = await c1.request(t.atrium, { body: JSON.stringify({ prompt: PROMPTS[0] }), headers: auth });
    if (first.status !== 200) throw new Error(`Atrium completion failed: ${first.status} ${first.body.slice(0, 300)}`);
    const [plainReq] = await standIn.call<Array<{ body: Json }>>('standin.requests', { n: 1 });
    const firstStream = await c1.request(t.atriumStream, { body: JSON.stringify({ prompt: PROMPTS[0] }), headers: auth });
    if (!firstStream.body.includes('event: done')) throw new Error(`Atrium stream failed: ${firstStream.status} ${firstStream.body.slice(0, 300)}`);
    const [streamReq] = await standIn.call<Array<{ body: Json }>>('standin.requests', { n: 1 });
    const plainBody = plainReq!.body;
    const streamBody = streamReq!.body;

    let thread: string | null = null;
    /** The OpenAI-compatible request a client SDK sends: no thread is kept (the default), the prompt log is. */
    const v1Body = (i: number) => JSON.stringify({ model: t.v1Model, messages: [{ role: 'user', content: PROMPTS[i % PROMPTS.length] }] });
    const shots = {
      v1: (i: number) => c1.request(t.v1, { body: v1Body(i), headers: auth }).then((r) => ok(r, '"chat.completion"')),
      direct: (i: number) => c1.request(t.direct, { body: providerBody(plainBody, PROMPTS[i % PROMPTS.length]!) }).then((r) => ok(r, '"choices"')),
      bare: (i: number) => c1.request(t.bare, { body: providerBody(plainBody, PROMPTS[i % PROMPTS.length]!) }).then((r) => ok(r, '"choices"')),
      atrium: (i: number) =>
        c1.request(t.atrium, { body: JSON.stringify({ prompt: PROMPTS[i % PROMPTS.length] }), headers: auth }).then((r) => ok(r, '"threadId"')),
      // a follow-up turn in an existing short thread (its history read before the call, then one statement)
      followUp: async (i: number) => {
        if (i % FOLLOW_UPS_PER_THREAD === 0 || !thread) {
          const opened = await c1.request(t.atrium, { body: JSON.stringify({ prompt: PROMPTS[i % PROMPTS.length] }), headers: auth });
          thread = opened.status === 200 ? (JSON.parse(opened.body) as { threadId: string }).threadId : null;
          if (!thread) return null;
        }
        return c1
          .request(t.atrium, { body: JSON.stringify({ prompt: PROMPTS[(i + 1) % PROMPTS.length], threadId: thread }), headers: auth })
          .then((r) => ok(r, '"threadId"'));
      },
      portkey: (i: number) =>
        t.portkey
          ? c1
              .request(t.portkey.target, { body: providerBody(plainBody, PROMPTS[i % PROMPTS.length]!), headers: t.portkey.headers })
              .then((r) => ok(r, '"choices"'))
          : Promise.resolve(null),
      // usage: the same new-thread call by a team under a budget and a rate limit
      budgeted: (i: number) =>
        t.budgeted
          ? c1
              .request(t.budgeted.target, {
                body: JSON.stringify({ prompt: PROMPTS[i % PROMPTS.length] }),
                headers: { authorization: `Bearer ${t.budgeted.key}` },
              })
              .then((r) => ok(r, '"threadId"'))
          : Promise.resolve(null),
    };
    type LatencyPath = 'direct' | 'bare' | 'portkey' | 'atrium' | 'followUp' | 'v1' | 'budgeted';
    const latencyPaths: LatencyPath[] = [
      'direct',
      'bare',
      ...(t.portkey ? (['portkey'] as const) : []),
      'atrium',
      'followUp',
      'v1',
      ...(t.budgeted ? (['budgeted'] as const) : []),
    ];
    const streamPaths = ['direct', 'bare', ...(t.portkey ? (['portkey'] as const) : []), 'atrium'] as const;
    const ttft = {
      direct: (i: number) =>
        c1
          .request(t.direct, { body: providerBody(streamBody, PROMPTS[i % PROMPTS.length]!), mark: (s) => s.includes(DIRECT_FIRST_CONTENT) })
          .then((r) => (ok(r, '[DONE]') === null ? null : r.markMs)),
      bare: (i: number) =>
        c1
          .request(t.bare, { body: providerBody(streamBody, PROMPTS[i % PROMPTS.length]!), mark: (s) => s.includes(DIRECT_FIRST_CONTENT) })
          .then((r) => (ok(r, '[DONE]') === null ? null : r.markMs)),
      portkey: (i: number) =>
        c1
          .request(t.portkey!.target, {
            body: providerBody(streamBody, PROMPTS[i % PROMPTS.length]!),
            headers: t.portkey!.headers,
            mark: (s) => s.includes(DIRECT_FIRST_CONTENT),
          })
          .then((r) => (ok(r, '[DONE]') === null ? null : r.markMs)),
      atrium: (i: number) =>
        c1
          .request(t.atriumStream, {
            body: JSON.stringify({ prompt: PROMPTS[i % PROMPTS.length] }),
            headers: auth,
            mark: (s) => s.includes(ATRIUM_FIRST_DELTA),
          })
          .then((r) => (ok(r, 'event: done') === null ? null : r.markMs)),
    };

    // Warm-up (JIT, connection pools, prepared plans).
    for (const k of latencyPaths) await sequential(WARMUP, shots[k]);
    for (const k of streamPaths) await sequential(WARMUP / 3, ttft[k]);

    // Concurrency 1: interleaved rounds (direct, bare, Atrium), so drift hits all three alike.
    const lat = {
      direct: [] as number[],
      bare: [] as number[],
      portkey: [] as number[],
      atrium: [] as number[],
      followUp: [] as number[],
      v1: [] as number[],
      budgeted: [] as number[],
    };
    let errors = 0;
    for (let i = 0; i < LATENCY_ROUNDS; i++) {
      for (const k of latencyPaths) {
        const ms = await shots[k](i);
        if (ms === null) errors++;
        else lat[k].push(ms);
      }
    }
    const s = {
      direct: summarize(lat.direct),
      bare: summarize(lat.bare),
      portkey: summarize(lat.portkey),
      atrium: summarize(lat.atrium),
      followUp: summarize(lat.followUp),
      v1: summarize(lat.v1),
    };
    const addedP50 = s.atrium.p50 - s.direct.p50;
    /** One latency row: a path's percentiles and what it adds over the direct call at the same percentile. */
    const row = (path: string, x: (typeof s)['direct'], target = ''): Row => ({
      backend: label,
      path,
      n: x.n,
      'p50 ms': round(x.p50),
      'p99 ms': round(x.p99),
      'added p50 ms': round(x.p50 - s.direct.p50),
      'added p99 ms': round(x.p99 - s.direct.p99),
      'target (added p50)': target,
    });
    const latency: Row[] = [
      row('direct (stand-in)', s.direct),
      row('bare Fastify pass-through', s.bare),
      ...(t.portkey ? [row(PORTKEY_PATH, s.portkey)] : []),
      row('Atrium /completions', s.atrium, verdict(round(addedP50), '<=', TARGET_ADDED_P50_MS)),
      row(`Atrium /completions, follow-up in a thread (≤ ${FOLLOW_UPS_PER_THREAD} turns)`, s.followUp),
      row('Atrium /v1/chat/completions (OpenAI-compatible, no thread kept)', s.v1),
    ];
    // usage: the budget check's cost = budgeted − unbudgeted new-thread call, p50, same rounds
    if (t.budgeted) {
      const b = summarize(lat.budgeted);
      const cost = round(b.p50 - s.atrium.p50);
      latency.push({
        ...row('Atrium /completions under a team budget + rate limit', b),
        'budget check p50 ms': cost,
        'target (check)': verdict(cost, '<=', TARGET_BUDGET_P50_MS),
      });
    }
    if (errors > 0) notes.push(`${label}: ${errors} failed request(s) in the latency rounds.`);

    // Streams, concurrency 1, interleaved.
    const tt = { direct: [] as number[], bare: [] as number[], portkey: [] as number[], atrium: [] as number[] };
    let streamErrors = 0;
    for (let i = 0; i < STREAM_ROUNDS; i++) {
      for (const k of streamPaths) {
        const ms = await ttft[k](i);
        if (ms === null) streamErrors++;
        else tt[k].push(ms);
      }
    }
    const ts = { direct: summarize(tt.direct), bare: summarize(tt.bare), portkey: summarize(tt.portkey), atrium: summarize(tt.atrium) };
    const streams: Row[] = [
      {
        backend: label,
        path: 'direct stream (first content chunk)',
        n: ts.direct.n,
        'TTFT p50 ms': round(ts.direct.p50),
        'TTFT p99 ms': round(ts.direct.p99),
        'added p50 ms': 0,
        'added p99 ms': 0,
      },
      {
        backend: label,
        path: 'bare pass-through stream',
        n: ts.bare.n,
        'TTFT p50 ms': round(ts.bare.p50),
        'TTFT p99 ms': round(ts.bare.p99),
        'added p50 ms': round(ts.bare.p50 - ts.direct.p50),
        'added p99 ms': round(ts.bare.p99 - ts.direct.p99),
      },
      ...(t.portkey && ts.portkey.n > 0
        ? [
            {
              backend: label,
              path: `${PORTKEY_PATH} stream`,
              n: ts.portkey.n,
              'TTFT p50 ms': round(ts.portkey.p50),
              'TTFT p99 ms': round(ts.portkey.p99),
              'added p50 ms': round(ts.portkey.p50 - ts.direct.p50),
              'added p99 ms': round(ts.portkey.p99 - ts.direct.p99),
            },
          ]
        : []),
      {
        backend: label,
        path: 'Atrium /completions/stream (first `event: delta`)',
        n: ts.atrium.n,
        'TTFT p50 ms': round(ts.atrium.p50),
        'TTFT p99 ms': round(ts.atrium.p99),
        'added p50 ms': round(ts.atrium.p50 - ts.direct.p50),
        'added p99 ms': round(ts.atrium.p99 - ts.direct.p99),
      },
    ];
    if (t.portkey && ts.portkey.n === 0) {
      notes.push(`${label}: Portkey answered no streamed request (${STREAM_ROUNDS} tried), so it has no time-to-first-token row.`);
      streamErrors -= STREAM_ROUNDS;
    }
    if (streamErrors > 0) notes.push(`${label}: ${streamErrors} failed stream(s).`);

    // Throughput: closed loop at concurrency 64, stand-in answering after 20 ms.
    const cN = new HttpClient(CONCURRENCY);
    const loadShots = {
      direct: (i: number) => cN.request(t.direct, { body: providerBody(plainBody, PROMPTS[i % PROMPTS.length]!), discardBody: true }).then((r) => ok(r)),
      bare: (i: number) => cN.request(t.bare, { body: providerBody(plainBody, PROMPTS[i % PROMPTS.length]!), discardBody: true }).then((r) => ok(r)),
      portkey: (i: number) =>
        cN
          .request(t.portkey!.target, { body: providerBody(plainBody, PROMPTS[i % PROMPTS.length]!), headers: t.portkey!.headers, discardBody: true })
          .then((r) => ok(r)),
      atrium: (i: number) =>
        cN.request(t.atrium, { body: JSON.stringify({ prompt: PROMPTS[i % PROMPTS.length] }), headers: auth, discardBody: true }).then((r) => ok(r)),
      v1: (i: number) => cN.request(t.v1, { body: v1Body(i), headers: auth, discardBody: true }).then((r) => ok(r)),
    };
    const rps: Record<string, number> = {};
    const throughput: Row[] = [];
    await standIn.call('standin.set', { delayMs: UPSTREAM_DELAY_MS });
    try {
      for (const k of ['direct', 'bare', ...(t.portkey ? (['portkey'] as const) : []), 'atrium', 'v1'] as const) {
        await closedLoop({ concurrency: CONCURRENCY, durationMs: THROUGHPUT_WARMUP_MS, shot: loadShots[k] });
        const r = await closedLoop({ concurrency: CONCURRENCY, durationMs: THROUGHPUT_MS, shot: loadShots[k] });
        rps[k] = r.rps;
        const ls = summarize(r.latencies);
        throughput.push({
          backend: label,
          path:
            k === 'direct'
              ? 'direct (stand-in)'
              : k === 'bare'
                ? 'bare Fastify pass-through'
                : k === 'portkey'
                  ? PORTKEY_PATH
                  : k === 'v1'
                    ? 'Atrium /v1/chat/completions'
                    : 'Atrium /completions',
          requests: r.completed,
          errors: r.errors,
          'req/s': round(r.rps, 0),
          'p50 ms': round(ls.p50),
          'p99 ms': round(ls.p99),
          'vs bare': k === 'direct' ? '' : round(r.rps / (rps.bare ?? Number.NaN), 2),
          'target (≥ 0.5× bare)': k === 'atrium' ? verdict(round(r.rps / rps.bare!, 2), '>=', TARGET_THROUGHPUT_RATIO) : '',
          'vs Portkey': k === 'atrium' && rps.portkey ? round(r.rps / rps.portkey, 2) : '',
        });
        if (r.errors > 0) notes.push(`${label}: ${r.errors} failed request(s) under load on ${k}${r.firstError ? ` (first: ${r.firstError})` : ''}.`);
      }
    } finally {
      await standIn.call('standin.set', { delayMs: 0 });
      cN.close();
    }

    // Where the time goes: a last pass (its stamps cost a little, so it runs after the others) in
    // which the server stamps each request's phases (bench/lib/phases.ts), one request at a time.
    await atrium.call('phases.start');
    const tagged = (kind: string) => ({ ...auth, 'x-bench-phase': kind });
    let phaseThread: string | null = null;
    for (let i = 0; i < PHASE_ROUNDS; i++) {
      const prompt = PROMPTS[i % PROMPTS.length]!;
      ok(await c1.request(t.atrium, { body: JSON.stringify({ prompt }), headers: tagged('new thread') }), '"threadId"');
      if (i % FOLLOW_UPS_PER_THREAD === 0 || !phaseThread) {
        const opened = await c1.request(t.atrium, { body: JSON.stringify({ prompt }), headers: auth });
        phaseThread = opened.status === 200 ? (JSON.parse(opened.body) as { threadId: string }).threadId : null;
      }
      if (phaseThread) ok(await c1.request(t.atrium, { body: JSON.stringify({ prompt, threadId: phaseThread }), headers: tagged('follow-up') }), '"threadId"');
      ok(await c1.request(t.v1, { body: v1Body(i), headers: tagged('v1') }), '"chat.completion"');
    }
    const stamped = await atrium.call<Record<string, Record<string, number>>>('phases.read');
    // the phases in the server's order (bench/lib/phases.ts PHASES)
    const phases: Row[] = Object.keys(Object.values(stamped)[0] ?? {}).map((phase) => ({
      backend: label,
      phase,
      'new thread p50 ms': round(stamped['new thread']?.[phase] ?? Number.NaN),
      'follow-up p50 ms': round(stamped['follow-up']?.[phase] ?? Number.NaN),
      '/v1 p50 ms': round(stamped.v1?.[phase] ?? Number.NaN),
    }));
    return { latency, throughput, streams, phases, notes };
  } finally {
    c1.close();
  }
}

export async function benchGateway(): Promise<Section> {
  const sw = stopwatch();
  const latency: Row[] = [];
  const throughput: Row[] = [];
  const streams: Row[] = [];
  const phases: Row[] = [];
  const notes: string[] = [];
  const standIn = await ServerProcess.start('standin');
  let bare: ServerProcess | null = null;
  let portkey: Portkey | null = null;
  try {
    const si = await standIn.call<{ openaiBaseUrl: string }>('standin.start');
    bare = await ServerProcess.start('bare');
    const bareUrl = (await bare.call<{ url: string }>('bare.start', { upstream: si.openaiBaseUrl })).url;
    portkey = await startPortkey().catch((err: Error) => {
      notes.push(`Portkey not measured: ${err.message}`);
      return null;
    });

    const backends: Array<{
      label: string;
      proc: string;
      thread?: boolean;
      db: () => Promise<{ url: string | null; drop(): Promise<void> } | { error: string }>;
    }> = [
      { label: 'PGlite (on disk, app thread)', proc: 'atrium-pglite', db: async () => ({ url: null, drop: async () => {} }) },
      // The default arrangement (EMBEDDED_DB_THREAD=on), measured in the same run: PGlite on its own thread.
      { label: 'PGlite (on disk, own thread: the default)', proc: 'atrium-pglite-thread', thread: true, db: async () => ({ url: null, drop: async () => {} }) },
      {
        label: 'PostgreSQL',
        proc: 'atrium-postgres',
        db: async () => {
          const d = await createThrowawayDb('gw');
          return isDb(d) ? { url: d.url, drop: d.drop } : d;
        },
      },
    ];
    for (const b of backends) {
      const db = await b.db();
      if ('error' in db) {
        notes.push(`${b.label} skipped: ${db.error}`);
        continue;
      }
      const atrium = await ServerProcess.start(b.proc);
      try {
        const base = (await atrium.call<{ url: string }>('atrium.start', { databaseUrl: db.url, embeddedDbThread: b.thread === true })).url;
        const setup = new HttpClient(1);
        const { key, workspaceId } = await setUpAtrium(setup, base, si.openaiBaseUrl);
        const budgeted = await setUpBudgeted(setup, base, si.openaiBaseUrl).finally(() => setup.close());
        const r = await measureBackend(b.label, standIn, atrium, {
          direct: target(`${si.openaiBaseUrl}/chat/completions`),
          bare: target(`${bareUrl}/v1/chat/completions`),
          atrium: target(`${base}/api/v1/chat/${workspaceId}/completions`),
          atriumStream: target(`${base}/api/v1/chat/${workspaceId}/completions/stream`),
          v1: target(`${base}/v1/chat/completions`),
          v1Model: `workspace/${workspaceId}`,
          key,
          budgeted: { target: target(`${base}/api/v1/chat/${budgeted.workspaceId}/completions`), key: budgeted.key },
          ...(portkey
            ? { portkey: { target: target(`${portkey.url}/v1/chat/completions`), headers: portkey.headers(si.openaiBaseUrl, 'sk-bench-0123456789') } }
            : {}),
        });
        latency.push(...r.latency);
        throughput.push(...r.throughput);
        streams.push(...r.streams);
        phases.push(...r.phases);
        notes.push(...r.notes);
      } catch (err) {
        notes.push(`${b.label} failed: ${(err as Error).message}`);
      } finally {
        await atrium.stop();
        await db.drop().catch((err: Error) => notes.push(`could not drop the ${b.label} bench database: ${err.message}`));
      }
    }
  } finally {
    await portkey?.stop();
    await bare?.stop();
    await standIn.stop();
  }
  if (latency.length === 0) throw new Error(`no backend could be measured: ${notes.join(' ')}`);

  const targets: TargetRow[] = [
    ...latency
      .filter((r) => r['target (added p50)'])
      .map((r): TargetRow => ({
        benchmark: `Gateway, ${r.backend}`,
        target: `added p50 latency ≤ ${TARGET_ADDED_P50_MS} ms (c=1)`,
        measured: `${r['added p50 ms']} ms`,
        result: String(r['target (added p50)']).startsWith('pass') ? 'pass' : 'MISS',
      })),
    ...throughput
      .filter((r) => r['target (≥ 0.5× bare)'])
      .map((r): TargetRow => ({
        benchmark: `Gateway, ${r.backend}`,
        target: `throughput ≥ ${TARGET_THROUGHPUT_RATIO}× bare pass-through (c=${CONCURRENCY})`,
        measured: `${r['vs bare']}× (${r['req/s']} req/s)`,
        result: String(r['target (≥ 0.5× bare)']).startsWith('pass') ? 'pass' : 'MISS',
      })),
  ];
  // The peer: Atrium's added latency below Portkey's (p50 and p99, same rounds) and its c=64 throughput at least Portkey's.
  for (const backend of new Set(latency.map((r) => String(r.backend)))) {
    const pk = latency.find((r) => r.backend === backend && r.path === PORTKEY_PATH);
    const at = latency.find((r) => r.backend === backend && r.path === 'Atrium /completions');
    if (pk && at) {
      for (const q of ['p50', 'p99'] as const) {
        const a = Number(at[`added ${q} ms`]);
        const b = Number(pk[`added ${q} ms`]);
        targets.push({
          benchmark: `Gateway vs Portkey, ${backend}`,
          target: `Atrium added ${q} < Portkey's added ${q} (c=1)`,
          measured: `${a} ms vs ${b} ms`,
          result: a < b ? 'pass' : 'MISS',
        });
      }
    }
    const pkT = throughput.find((r) => r.backend === backend && r.path === PORTKEY_PATH);
    const atT = throughput.find((r) => r.backend === backend && r.path === 'Atrium /completions');
    if (pkT && atT)
      targets.push({
        benchmark: `Gateway vs Portkey, ${backend}`,
        target: `Atrium req/s ≥ Portkey's (c=${CONCURRENCY})`,
        measured: `${atT['req/s']} vs ${pkT['req/s']}`,
        result: Number(atT['req/s']) >= Number(pkT['req/s']) ? 'pass' : 'MISS',
      });
  }
  // usage: the budget check's own target
  for (const r of latency.filter((x) => x['target (check)'])) {
    targets.push({
      benchmark: `Gateway, ${r.backend}`,
      target: `budget + rate limit check ≤ ${TARGET_BUDGET_P50_MS} ms at p50 vs none (c=1)`,
      measured: `${r['budget check p50 ms']} ms`,
      result: String(r['target (check)']).startsWith('pass') ? 'pass' : 'MISS',
    });
  }
  const misses = [
    ...latency
      .filter((r) => String(r['target (added p50)']).startsWith('MISS'))
      .map((r) => `added p50 on ${r.backend} is ${r['added p50 ms']} ms (target ≤ ${TARGET_ADDED_P50_MS} ms)`),
    ...throughput
      .filter((r) => String(r['target (≥ 0.5× bare)']).startsWith('MISS'))
      .map((r) => `throughput on ${r.backend} is ${r['vs bare']}× the bare pass-through (target ≥ ${TARGET_THROUGHPUT_RATIO}×)`),
  ];
  const bareAdded = latency.filter((r) => String(r.path).startsWith('bare')).map((r) => `${r['added p50 ms']} ms on the ${r.backend} run`);
  if (bareAdded.length > 0)
    notes.push(`For scale: the bare pass-through alone (one extra HTTP hop + fetch, no work) adds ${bareAdded.join(', ')} at p50 on this machine.`);
  if (misses.length > 0) notes.unshift(`Targets missed: ${misses.join('; ')}.`);
  else notes.unshift('All gateway targets met.');

  return {
    name: 'Gateway overhead (chat completions through Atrium)',
    method: [
      'The stand-in provider (test/support/standin-provider.ts), a bare Fastify pass-through (one route: parse JSON, `fetch` to the stand-in, return its JSON; no auth, no DB) and Atrium (`buildApp` + `listen`, on-disk PGlite — on a thread of its own as `npm start` runs it (`EMBEDDED_DB_THREAD=on`, the default), and on the application thread (`off`) for comparison — or PostgreSQL with the default pool of 10) each run in their own Node process; the load generator (node:http, keep-alive agent) runs in the bench process, all on this machine.',
      "Atrium requests are `POST /api/v1/chat/{workspaceId}/completions` with `{prompt}` — every request opens a new thread (the provider call, then the thread, the user message, the answer, the finished prompt log and the ledger row in one statement, group-committed under concurrency: a plain answer to a new thread is written whole). Direct and bare requests send the exact OpenAI body Atrium sent to the stand-in (copied from the stand-in's request log).",
      `Latency: ${WARMUP} warm-up requests per path, then ${LATENCY_ROUNDS} interleaved rounds (direct, bare, Atrium new thread, Atrium follow-up) at concurrency 1; "added" = path minus direct at the same percentile. A follow-up is a \`{prompt, threadId}\` turn in a thread of at most ${FOLLOW_UPS_PER_THREAD} earlier turns (opening a new thread every ${FOLLOW_UPS_PER_THREAD} turns is not measured); it costs a read of the thread's history before the call and one statement (question, answer, log, ledger row) after it.`,
      `Streams: ${STREAM_ROUNDS} interleaved rounds at concurrency 1; time-to-first-token = request start → first byte of the first content chunk (stand-in: \`"delta":{"content":"\`; Atrium: \`event: delta\`).`,
      'The OpenAI-compatible path is `POST /v1/chat/completions` with `{model: "workspace/<id>", messages: [{role: "user", content}]}` as an SDK sends it: the same turn without a stored thread (the provider call, then the finished prompt log and the ledger row in one statement), plus the protocol translation; it is measured in the same interleaved rounds and loops.',
      `Throughput: closed loop, ${CONCURRENCY} concurrent keep-alive connections, stand-in delay ${UPSTREAM_DELAY_MS} ms, ${THROUGHPUT_WARMUP_MS / 1000} s warm-up then ${THROUGHPUT_MS / 1000} s measured per path.`,
      "The peer is Portkey's open-source gateway (`@portkey-ai/gateway`, its own server command in a child process), sent the same direct body with the headers that route it to the stand-in as an OpenAI provider; it is measured in the same interleaved rounds, streams and loops as the others (once per Atrium backend). It persists nothing; Atrium persists every turn before answering. Its release fails every streamed request on Node (it appends headers to the upstream's immutable fetch response), so it runs with a preload that hands a streamed upstream response on as a new Response over the same body (bench/lib/portkey-streams.mjs), as its own proposed fix does.",
      `Phases: a last pass of ${PHASE_ROUNDS} rounds (new thread, follow-up, OpenAI-compatible) in which the server stamps each request (bench/lib/phases.ts): arrival, the turn's start, the start and end of statement 1 (for a follow-up, its read), of the provider call and of statement 2 (until it is stored, or for a journaled answer on the embedded database on disk until it is journaled and sent), and the response sent; each phase's p50.`,
      `Targets: Atrium added p50 ≤ ${TARGET_ADDED_P50_MS} ms at concurrency 1; Atrium throughput ≥ ${TARGET_THROUGHPUT_RATIO}× the bare pass-through; Atrium's added p50 and p99 below Portkey's and its throughput at least Portkey's.`,
      `Budgets: a second team, set up alike, has a team budget and a rate limit (never exhausted) that every one of its calls reserves against; its new-thread calls run in the same interleaved latency rounds, and "budget check" is its p50 minus the unbudgeted team's (target ≤ ${TARGET_BUDGET_P50_MS} ms).`,
    ].join(' '),
    tables: [
      { title: 'Added latency, concurrency 1 (non-streaming)', rows: latency },
      { title: `Throughput, concurrency ${CONCURRENCY}, upstream delay ${UPSTREAM_DELAY_MS} ms`, rows: throughput },
      { title: 'Streaming time-to-first-token, concurrency 1', rows: streams },
      { title: "Where an Atrium turn's time goes, concurrency 1 (p50 of each phase, stamped inside the server)", rows: phases },
    ],
    notes,
    targets,
    seconds: sw.elapsedMs() / 1000,
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(renderSection(await benchGateway()));
}
