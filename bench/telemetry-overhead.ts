/**
 * Telemetry overhead: what metrics (METRICS_TOKEN) and tracing (OTLP/HTTP to a receiver on
 * loopback) add to each request, against the same server with both off, in the same run. Three
 * Atrium servers (off, metrics, tracing), each in its own child process on its own on-disk
 * embedded database, in front of one stand-in provider; requests go to the three in turn
 * (interleaved), so drift hits all alike. Two requests: a chat turn (provider call, statements,
 * spans of each) and GET /api/v1/me (the per-request hook alone). The receiver answers 200 and
 * counts the spans it is sent. Run alone: npx tsx bench/telemetry-overhead.ts (BENCH_QUICK=1: a
 * few rounds, to check it runs).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { setUpAtrium, PROMPTS } from './gateway.js';
import { ServerProcess } from './lib/child.js';
import { HttpClient, target, type Target } from './lib/http.js';
import { renderSection, type Row, type Section } from './lib/report.js';
import { round, summarize } from './lib/stats.js';
import { stopwatch } from './lib/timer.js';

const QUICK = process.env.BENCH_QUICK === '1';
const ROUNDS = QUICK ? 15 : 400;
const WARMUP = QUICK ? 5 : 100;
const METRICS_TOKEN = 'bench-metrics-token-0123456789';
const VARIANTS = ['off', 'metrics', 'tracing'] as const;
type Variant = (typeof VARIANTS)[number];

/** A loopback OTLP/HTTP receiver that reads and counts what it is sent, and answers 200. */
async function startReceiver(): Promise<{ url: string; bytes: () => number; close: () => Promise<void> }> {
  let bytes = 0;
  const server = http.createServer((req, res) => {
    req.on('data', (c: Buffer) => (bytes += c.length));
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`,
    bytes: () => bytes,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

export async function benchTelemetry(): Promise<Section> {
  const sw = stopwatch();
  const receiver = await startReceiver();
  const processes: ServerProcess[] = [];
  try {
    const standIn = await ServerProcess.start('standin');
    processes.push(standIn);
    const { openaiBaseUrl } = await standIn.call<{ openaiBaseUrl: string }>('standin.start');
    const setup = new HttpClient(1);
    const servers = {} as Record<Variant, { turn: Target; me: Target; key: string }>;
    for (const v of VARIANTS) {
      const p = await ServerProcess.start(`atrium-${v}`);
      processes.push(p);
      const args = {
        databaseUrl: null,
        embeddedDbThread: true,
        ...(v === 'metrics' ? { metricsToken: METRICS_TOKEN } : {}),
        ...(v === 'tracing' ? { tracesUrl: receiver.url } : {}),
      };
      const { url } = await p.call<{ url: string }>('atrium.start', args);
      const { key, workspaceId } = await setUpAtrium(setup, url, openaiBaseUrl);
      servers[v] = { turn: target(`${url}/api/v1/chat/${workspaceId}/completions`), me: target(`${url}/api/v1/me`), key };
    }

    const client = new HttpClient(1);
    const shot = async (v: Variant, kind: 'turn' | 'me', i: number): Promise<number> => {
      const s = servers[v];
      const headers = { authorization: `Bearer ${s.key}` };
      const r =
        kind === 'turn'
          ? await client.request(s.turn, { body: JSON.stringify({ prompt: PROMPTS[i % PROMPTS.length] }), headers })
          : await client.request(s.me, { headers });
      if (r.status !== 200) throw new Error(`${v} ${kind}: ${r.status} ${r.body.slice(0, 200)}`);
      return r.ms;
    };
    const samples: Record<'turn' | 'me', Record<Variant, number[]>> = {
      turn: { off: [], metrics: [], tracing: [] },
      me: { off: [], metrics: [], tracing: [] },
    };
    for (const kind of ['turn', 'me'] as const) {
      for (let i = 0; i < WARMUP; i++) for (const v of VARIANTS) await shot(v, kind, i);
      for (let i = 0; i < ROUNDS; i++) for (const v of VARIANTS) samples[kind][v].push(await shot(v, kind, i));
    }
    // The metrics are read once, as Prometheus would: the scrape must answer.
    const m = servers.metrics.turn;
    const scrape = await client.request({ ...m, path: '/metrics' }, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    if (scrape.status !== 200 || !scrape.body.includes('atrium_chat_turns_total')) throw new Error(`metrics scrape failed: ${scrape.status}`);

    const rows: Row[] = [];
    for (const kind of ['turn', 'me'] as const) {
      const off = summarize(samples[kind].off);
      for (const v of VARIANTS) {
        const s = summarize(samples[kind][v]);
        rows.push({
          request: kind === 'turn' ? 'chat turn (POST /api/v1/chat/{ws}/completions)' : 'GET /api/v1/me',
          telemetry: v,
          n: s.n,
          'p50 ms': round(s.p50, 2),
          'p90 ms': round(s.p90, 2),
          'p99 ms': round(s.p99, 2),
          'added p50 ms': v === 'off' ? 0 : round(s.p50 - off.p50, 2),
        });
      }
    }
    return {
      name: 'Telemetry overhead',
      method:
        `Three Atrium servers (each its own process, on-disk embedded database on its thread): telemetry off, metrics on (METRICS_TOKEN), tracing on ` +
        `(OTLP/HTTP JSON to a receiver on loopback, batched). ${ROUNDS} interleaved rounds per request kind after ${WARMUP} of warm-up; concurrency 1; ` +
        `the stand-in provider answers at once. "added p50" is the variant's p50 minus the off server's p50 in the same run.`,
      tables: [{ rows }],
      notes: [`The receiver was sent ${Math.round(receiver.bytes() / 1024)} KiB of spans.`],
      seconds: sw.elapsedMs() / 1000,
    };
  } finally {
    for (const p of processes) await p.stop();
    await receiver.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  benchTelemetry().then(
    (s) => {
      process.stdout.write(renderSection(s));
      process.exit(0);
    },
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
