/**
 * Where one chat turn's time goes, at concurrency 1, in-process (app.inject, no sockets on the
 * Atrium side): the user-turn statement, the provider call through the SDK, the answer statement —
 * for turns that open a thread and for follow-ups in a short thread (which read its history in the
 * user-turn statement).
 * Not part of `npm run bench`; run it when working on the chat path:
 *   npx tsx bench/chat-phases.ts                 # on-disk PGlite
 *   npx tsx bench/chat-phases.ts postgres://…    # PostgreSQL
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ChatRepo } from '../src/modules/chat/repo.js';
import { getAdapter } from '../src/providers/index.js';
import { newTeam, startTestApp } from '../test/helpers/app.js';
import { createModel, createWorkspace } from '../test/helpers/factories.js';
import { startStandInProvider } from '../test/support/standin-provider.js';
import { percentile } from './lib/stats.js';

const p50 = (samples: number[]) =>
  percentile(
    [...samples].sort((a, b) => a - b),
    50,
  ).toFixed(3);

const WARMUP = Number(process.env.PHASES_WARMUP ?? 100);
const ROUNDS = Number(process.env.PHASES_ROUNDS ?? 400);
const FOLLOW_UPS_PER_THREAD = 8;

const databaseUrl = process.argv[2] ?? null;
const standIn = await startStandInProvider();
const t = await startTestApp({ databaseUrl, dataDir: mkdtempSync(path.join(tmpdir(), 'atrium-phases-')) });
const team = await newTeam(t);
const model = await createModel(t, team.ownerKey, { url: standIn.openaiBaseUrl });
const ws = await createWorkspace(t, team.ownerKey, { modelIds: [model.id] });

let times: Record<string, number[]> = {};
function timed(name: string, target: object, method: string): void {
  const obj = target as Record<string, (...a: unknown[]) => Promise<unknown>>;
  const original = obj[method]!;
  obj[method] = async function (this: unknown, ...args: unknown[]) {
    const start = performance.now();
    try {
      return await original.apply(this, args);
    } finally {
      (times[name] ??= []).push(performance.now() - start);
    }
  };
}
timed('statement 1: user turn', ChatRepo.prototype, 'recordUserTurns');
timed('provider call (SDK → stand-in)', getAdapter('OPENAI', 'URL'), 'complete');
timed('statement 2: answer', ChatRepo.prototype, 'recordAnswers');

const turn = (payload: object) => t.request({ method: 'POST', url: `/api/v1/chat/${ws.id}/completions`, key: team.ownerKey, payload });

for (const followUps of [false, true]) {
  times = {};
  const total: number[] = [];
  let threadId: string | null = null;
  for (let i = 0; i < WARMUP + ROUNDS; i++) {
    if (followUps && i % FOLLOW_UPS_PER_THREAD === 0) {
      threadId = (await turn({ prompt: `opening ${i}` })).json().threadId as string;
      for (const v of Object.values(times)) v.pop(); // the opening turn is not measured
    }
    const start = performance.now();
    const res = await turn(followUps ? { prompt: `hello ${i}`, threadId } : { prompt: `hello ${i}` });
    if (res.statusCode !== 200) throw new Error(res.body);
    if (i >= WARMUP) total.push(performance.now() - start);
  }
  const what = followUps ? `follow-ups in threads of ≤ ${FOLLOW_UPS_PER_THREAD} turns` : 'turns opening a thread';
  console.log(`${databaseUrl ? 'PostgreSQL' : 'PGlite (on disk)'}: p50 ms over ${ROUNDS} ${what}`);
  console.log(`  whole request (inject)          ${p50(total)}`);
  for (const [name, v] of Object.entries(times)) console.log(`  ${name.padEnd(32)}${p50(v.slice(WARMUP))}`);
}
await t.close();
await standIn.close();
