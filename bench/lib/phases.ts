/**
 * Where an Atrium turn's time goes, stamped inside the server's own process (bench/lib/server-host.ts
 * runs it on the commands `phases.start` / `phases.read`) while the gateway bench sends one request
 * at a time, so that every stamp belongs to the one request in flight.
 *
 * Stamps: the request's arrival (the HTTP server's `request` event), the turn's start
 * (`TurnService.run` called), the start and end of statement 1 (user turn, pending log; none for a
 * turn written whole, ChatRepo.recordWholeTurns, but a follow-up's read, ChatRepo.readFollowUp), of the provider call (the OpenAI adapter) and of
 * statement 2 (answer, finished log, or the whole turn: TurnStore.storeAnswer, which a journaled
 * answer leaves once the statement is sent, docs/DECISIONS.md), and the response's `finish`. Statement 1 and the provider call may overlap; the "critical path" phase is what the
 * request waited for between the plan and both being done. A request is labelled by its
 * `x-bench-phase` header; requests without one are not recorded.
 */
import type { Server } from 'node:http';
import { ChatRepo } from '../../src/modules/chat/repo.js';
import { TurnStore } from '../../src/modules/chat/turn-store.js';
import { TurnService } from '../../src/modules/chat/turns.js';
import { getAdapter } from '../../src/providers/index.js';
import { percentile } from './stats.js';

interface Stamps {
  label: string;
  arrived: number;
  turn?: number;
  s1Start?: number;
  s1End?: number;
  callStart?: number;
  callEnd?: number;
  s2Start?: number;
  s2End?: number;
  finished?: number;
}
type StampName = Exclude<keyof Stamps, 'label' | 'arrived'>;

let current: Stamps | null = null;
let recorded: Stamps[] | null = null;
let installed = false;

function stampAround(owner: object, method: string, start: StampName, end: StampName): void {
  const obj = owner as Record<string, (...a: unknown[]) => Promise<unknown>>;
  const original = obj[method]!;
  obj[method] = async function (this: unknown, ...args: unknown[]) {
    const s = current;
    if (s) s[start] ??= performance.now();
    try {
      return await original.apply(this, args);
    } finally {
      if (s) s[end] = performance.now();
    }
  };
}

/** Start recording (the first call also installs the stamps on `server` and the turn's parts). */
export function startPhases(server: Server): void {
  if (!installed) {
    installed = true;
    stampAround(ChatRepo.prototype, 'recordUserTurns', 's1Start', 's1End');
    stampAround(ChatRepo.prototype, 'recordNewThreadTurns', 's1Start', 's1End');
    stampAround(ChatRepo.prototype, 'readFollowUp', 's1Start', 's1End');
    stampAround(getAdapter('OPENAI', 'URL'), 'complete', 'callStart', 'callEnd');
    stampAround(TurnStore.prototype, 'storeAnswer', 's2Start', 's2End');
    const run = TurnService.prototype.run;
    TurnService.prototype.run = function (this: TurnService, ...args: Parameters<typeof run>) {
      if (current) current.turn ??= performance.now();
      return run.apply(this, args);
    };
    server.prependListener('request', (req, res) => {
      const label = req.headers['x-bench-phase'];
      if (!recorded || typeof label !== 'string') return;
      const s: Stamps = { label, arrived: performance.now() };
      current = s;
      recorded.push(s);
      res.once('finish', () => (s.finished = performance.now()));
    });
  }
  recorded = [];
}

const PHASES = [
  'server: arrival → response sent',
  '1. parse, auth, validation',
  '2. plan: workspace, model, budgets',
  '3. statement 1 (user turn, pending log; a plain follow-up: its read)',
  '4. provider call (adapter, SDK, stand-in)',
  '   3 and 4 overlapping',
  '   critical path: plan → 3 and 4 done',
  '5. records for statement 2',
  '6. statement 2 (answer, finished log; or the whole turn; journaled: until sent)',
  '7. serialise and send',
] as const;

/** Each label's p50 per phase (ms); recording stops. */
export function readPhases(): Record<string, Record<string, number>> {
  const by = new Map<string, Record<string, number[]>>();
  for (const s of recorded ?? []) {
    const { turn, callStart, callEnd, s2Start, s2End, finished } = s;
    if ([turn, callStart, callEnd, s2Start, s2End, finished].some((v) => v === undefined)) continue;
    // a turn written whole has no statement 1: its phases 3 are 0, and the call is its critical path
    const s1Start = s.s1Start ?? callStart!;
    const s1End = s.s1End ?? callStart!;
    const work = Math.min(s1Start, callStart!);
    const values = [
      finished! - s.arrived,
      turn! - s.arrived,
      work - turn!,
      s1End - s1Start,
      callEnd! - callStart!,
      Math.max(0, Math.min(s1End, callEnd!) - Math.max(s1Start, callStart!)),
      Math.max(s1End, callEnd!) - work,
      s2Start! - Math.max(s1End, callEnd!),
      s2End! - s2Start!,
      finished! - s2End!,
    ];
    let phases = by.get(s.label);
    if (!phases) by.set(s.label, (phases = {}));
    PHASES.forEach((name, i) => (phases[name] ??= []).push(values[i]!));
  }
  recorded = null;
  current = null;
  const out: Record<string, Record<string, number>> = {};
  for (const [label, phases] of by) {
    const p50: Record<string, number> = {};
    for (const [name, v] of Object.entries(phases))
      p50[name] = percentile(
        [...v].sort((a, b) => a - b),
        50,
      );
    out[label] = p50;
  }
  return out;
}
