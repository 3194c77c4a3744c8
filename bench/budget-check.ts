/**
 * The budget check's cost alone, quicker than the whole gateway bench: a new-thread
 * call by a team under a team budget + rate limit minus the same call by a team under none, p50,
 * at concurrency 1, on on-disk PGlite and on PostgreSQL — the gateway bench's "budget check"
 * figure without its other paths, streams and throughput loops.
 *
 *   npx tsx bench/budget-check.ts [--ab <other checkout>] [--rounds N] [--only pglite|postgres]
 *
 * With --ab, the other checkout's Atrium (e.g. /work/main) runs beside this one and the rounds
 * interleave both (A plain, A budgeted, B plain, B budgeted), so machine noise hits both alike.
 */
import { parseArgs } from 'node:util';
import { setUpAtrium, setUpBudgeted, PROMPTS } from './gateway.js';
import { ROOT, ServerProcess } from './lib/child.js';
import { HttpClient, target, type Target } from './lib/http.js';
import { createThrowawayDb, isDb } from './lib/pg.js';
import { round, summarize } from './lib/stats.js';

const { values: args } = parseArgs({ options: { ab: { type: 'string' }, rounds: { type: 'string', default: '600' }, only: { type: 'string' } } });
const ROUNDS = Number(args.rounds);
const WARMUP = Math.min(200, ROUNDS / 2);

interface Side {
  label: string;
  proc: ServerProcess;
  plain: { t: Target; key: string };
  budgeted: { t: Target; key: string };
  drop(): Promise<void>;
}

async function startSide(label: string, root: string, pgUrl: string | null, drop: () => Promise<void>, upstream: string): Promise<Side> {
  const proc = await ServerProcess.start(pgUrl ? 'atrium-postgres' : 'atrium-pglite', root);
  const base = (await proc.call<{ url: string }>('atrium.start', { databaseUrl: pgUrl })).url;
  const setup = new HttpClient(1);
  try {
    const a = await setUpAtrium(setup, base, upstream);
    const b = await setUpBudgeted(setup, base, upstream);
    const url = (ws: string) => target(`${base}/api/v1/chat/${ws}/completions`);
    return { label, proc, plain: { t: url(a.workspaceId), key: a.key }, budgeted: { t: url(b.workspaceId), key: b.key }, drop };
  } finally {
    setup.close();
  }
}

const standIn = await ServerProcess.start('standin');
try {
  const upstream = (await standIn.call<{ openaiBaseUrl: string }>('standin.start')).openaiBaseUrl;
  const roots: Array<{ name: string; root: string }> = [{ name: 'this', root: ROOT }, ...(args.ab ? [{ name: args.ab, root: args.ab }] : [])];
  for (const backend of ['pglite', 'postgres'] as const) {
    if (args.only && args.only !== backend) continue;
    const sides: Side[] = [];
    try {
      for (const r of roots) {
        if (backend === 'pglite') sides.push(await startSide(r.name, r.root, null, async () => {}, upstream));
        else {
          const d = await createThrowawayDb('bud');
          if (!isDb(d)) throw new Error(d.error);
          sides.push(await startSide(r.name, r.root, d.url, d.drop, upstream));
        }
      }
      const c = new HttpClient(1);
      const shot = async (p: { t: Target; key: string }, i: number) => {
        const r = await c.request(p.t, { body: JSON.stringify({ prompt: PROMPTS[i % PROMPTS.length] }), headers: { authorization: `Bearer ${p.key}` } });
        if (r.status !== 200) throw new Error(`${r.status} ${r.body.slice(0, 200)}`);
        return r.ms;
      };
      const lat = sides.map(() => ({ plain: [] as number[], budgeted: [] as number[] }));
      for (let i = 0; i < WARMUP + ROUNDS; i++) {
        for (const [k, s] of sides.entries()) {
          // alternate which of the pair goes first, so an order effect cancels
          const order = i % 2 === 0 ? (['plain', 'budgeted'] as const) : (['budgeted', 'plain'] as const);
          for (const p of order) {
            const ms = await shot(s[p], i);
            if (i >= WARMUP) lat[k]![p].push(ms);
          }
        }
      }
      c.close();
      for (const [k, s] of sides.entries()) {
        const a = summarize(lat[k]!.plain);
        const b = summarize(lat[k]!.budgeted);
        console.log(
          `${backend.padEnd(8)} ${s.label.padEnd(12)} n=${a.n} plain p50 ${round(a.p50)} ms, budgeted p50 ${round(b.p50)} ms → budget check p50 ${round(b.p50 - a.p50)} ms (mean ${round(b.mean - a.mean)} ms)`,
        );
      }
    } finally {
      for (const s of sides) {
        await s.proc.stop();
        await s.drop().catch(() => {});
      }
    }
  }
} finally {
  await standIn.stop();
}
