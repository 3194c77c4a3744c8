/**
 * Where one chat turn's time goes, at concurrency 1, over real HTTP on loopback (keep-alive): the
 * request's parse, auth and validation, planning (workspace, model, budgets), statement 1 (user
 * turn / pending log), the provider call through the adapter, statement 2 (answer / finished log)
 * and the response's serialisation and send — for `POST /api/v1/chat/{ws}/completions` opening a
 * thread, a follow-up in a short thread, and `POST /v1/chat/completions` (no thread kept).
 *
 * Phases are stamped inside the server process (one request at a time, so one timeline): the
 * request's arrival (the http server's `request` event), the turn's start (`TurnService.run`
 * called), each statement's and the provider call's start and end, and the response's `finish`.
 * Statement 1 and the provider call may overlap; "critical path" is what the request waited for.
 * Not part of `npm run bench`; run it when working on the chat path:
 *   npx tsx bench/chat-phases.ts                 # on-disk PGlite
 *   npx tsx bench/chat-phases.ts postgres://…    # PostgreSQL
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ChatRepo } from '../src/modules/chat/repo.js';
import { TurnService } from '../src/modules/chat/turns.js';
import { getAdapter } from '../src/providers/index.js';
import { newTeam, startTestApp } from '../test/helpers/app.js';
import { createModel, createWorkspace } from '../test/helpers/factories.js';
import { startStandInProvider } from '../test/support/standin-provider.js';
import { HttpClient, target } from './lib/http.js';
import { markdownTable, type Row } from './lib/report.js';
import { percentile } from './lib/stats.js';

const WARMUP = Number(process.env.PHASES_WARMUP ?? 150);
const ROUNDS = Number(process.env.PHASES_ROUNDS ?? 400);
const FOLLOW_UPS_PER_THREAD = 8;

const p = (samples: number[], q: number) =>
  Number(
    percentile(
      [...samples].sort((a, b) => a - b),
      q,
    ).toFixed(3),
  );

/** One request's stamps (ms, performance.now()). */
interface Stamps {
  arrived?: number;
  turn?: number;
  s1Start?: number;
  s1End?: number;
  callStart?: number;
  callEnd?: number;
  s2Start?: number;
  s2End?: number;
  finished?: number;
}
let cur: Stamps = {};

function wrap(target: object, method: string, start: keyof Stamps, end: keyof Stamps): void {
  const obj = target as Record<string, (...a: unknown[]) => Promise<unknown>>;
  const original = obj[method]!;
  obj[method] = async function (this: unknown, ...args: unknown[]) {
    const s = cur;
    s[start] ??= performance.now();
    try {
      return await original.apply(this, args);
    } finally {
      s[end] = performance.now();
    }
  };
}
wrap(ChatRepo.prototype, 'recordUserTurns', 's1Start', 's1End');
wrap(ChatRepo.prototype, 'recordNewThreadTurns', 's1Start', 's1End');
wrap(getAdapter('OPENAI', 'URL'), 'complete', 'callStart', 'callEnd');
wrap(ChatRepo.prototype, 'recordAnswers', 's2Start', 's2End');
const run = TurnService.prototype.run;
TurnService.prototype.run = function (this: TurnService, ...args: Parameters<typeof run>) {
  cur.turn ??= performance.now();
  return run.apply(this, args);
};

const databaseUrl = process.argv[2] ?? null;
const standIn = await startStandInProvider();
const t = await startTestApp({ databaseUrl, dataDir: mkdtempSync(path.join(tmpdir(), 'atrium-phases-')) });
const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
t.app.server.prependListener('request', (_req, res) => {
  const s: Stamps = { arrived: performance.now() };
  cur = s;
  res.once('finish', () => (s.finished = performance.now()));
});
const team = await newTeam(t);
const model = await createModel(t, team.ownerKey, { url: standIn.openaiBaseUrl });
const ws = await createWorkspace(t, team.ownerKey, { modelIds: [model.id] });

const client = new HttpClient(1);
const headers = { authorization: `Bearer ${team.ownerKey}` };
const chat = target(`${base}/api/v1/chat/${ws.id}/completions`);
const v1 = target(`${base}/v1/chat/completions`);

const kinds = {
  'new thread (/api/v1/chat)': async (i: number) => client.request(chat, { body: JSON.stringify({ prompt: `hello ${i}` }), headers }),
  'follow-up (/api/v1/chat)': (() => {
    let thread: string | null = null;
    return async (i: number) => {
      if (i % FOLLOW_UPS_PER_THREAD === 0 || !thread) {
        const r = await client.request(chat, { body: JSON.stringify({ prompt: `opening ${i}` }), headers });
        thread = (JSON.parse(r.body) as { threadId: string }).threadId;
      }
      return client.request(chat, { body: JSON.stringify({ prompt: `hello ${i}`, threadId: thread }), headers });
    };
  })(),
  '/v1/chat/completions': async (i: number) =>
    client.request(v1, { body: JSON.stringify({ model: `workspace/${ws.id}`, messages: [{ role: 'user', content: `hello ${i}` }] }), headers }),
};

const rows: Row[] = [];
for (const [kind, shot] of Object.entries(kinds)) {
  const ph: Record<string, number[]> = {};
  const add = (name: string, v: number | undefined) => {
    if (v !== undefined && Number.isFinite(v)) (ph[name] ??= []).push(v);
  };
  for (let i = 0; i < WARMUP + ROUNDS; i++) {
    const started = performance.now();
    const r = await shot(i);
    if (r.status !== 200) throw new Error(`${kind}: ${r.status} ${r.body.slice(0, 300)}`);
    const s = cur;
    if (i < WARMUP) continue;
    const work = Math.min(s.s1Start ?? Infinity, s.callStart ?? Infinity);
    add('client round trip', performance.now() - started);
    add('server: arrival → response finished', s.finished! - s.arrived!);
    add('1. parse, auth, validation (arrival → turn starts)', s.turn! - s.arrived!);
    add('2. plan: workspace, model, budgets (→ first write or call)', work - s.turn!);
    add('3. statement 1 (user turn, pending log)', s.s1End! - s.s1Start!);
    add('4. provider call (adapter + SDK → stand-in)', s.callEnd! - s.callStart!);
    add('   statement 1 and the call overlapping', Math.max(0, Math.min(s.s1End!, s.callEnd!) - Math.max(s.s1Start!, s.callStart!)));
    add('   critical path: plan end → both done', Math.max(s.s1End!, s.callEnd!) - work);
    add('5. records between call and statement 2', s.s2Start! - Math.max(s.s1End!, s.callEnd!));
    add('6. statement 2 (answer, finished log)', s.s2End! - s.s2Start!);
    add('7. serialise and send (→ finish)', s.finished! - s.s2End!);
  }
  for (const [phase, v] of Object.entries(ph)) rows.push({ path: kind, phase, n: v.length, 'p50 ms': p(v, 50), 'p99 ms': p(v, 99) });
}
client.close();
console.log(`\n${databaseUrl ? 'PostgreSQL' : 'PGlite (on disk)'}, concurrency 1, ${ROUNDS} requests per path after ${WARMUP} warm-up:\n`);
console.log(markdownTable(rows));
await t.close();
await standIn.close();
