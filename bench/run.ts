/**
 * `npm run bench`: run every benchmark (each compared with a reference measured in the same run)
 * and rewrite BENCHMARKS.md with the figures. One benchmark failing does not stop the others;
 * the exit code is non-zero only when all the benchmarks it ran failed.
 */
import path from 'node:path';
import { benchChatSearch } from './chat-search.js';
import { benchEventLoop } from './event-loop.js';
import { benchGateway } from './gateway.js';
import { benchImageTurns } from './image-turn.js';
import { benchIngestHostile } from './ingest-hostile.js';
import { benchOcr } from './ocr.js';
import { benchPage } from './page.js';
import { ROOT } from './lib/child.js';
import { failedSection, readSections, runStamp, storedSection, writeDocument, type StoredSection } from './lib/document.js';
import { type Row, type Section, type TargetRow } from './lib/report.js';
import { verdict } from './lib/stats.js';
import { stopwatch } from './lib/timer.js';
import { benchRetrieval } from './retrieval.js';
import { benchSignIn } from './sign-in.js';
import { benchRetrievalHybrid } from './retrieval-hybrid.js';
import { benchStartup } from './startup.js';
import { benchTelemetry } from './telemetry-overhead.js';
import { benchToolStep } from './tool-step.js';

interface LegacyResult {
  name: string;
  rows: Array<Record<string, string | number>>;
  notes: string;
}

/** bench/ingest.ts is owned elsewhere and returns {name, rows, notes}; adapt it, or skip it if absent. */
async function benchIngestSection(): Promise<Section> {
  let mod: { benchIngest?: () => Promise<LegacyResult> };
  try {
    mod = (await import('./ingest.js')) as typeof mod;
  } catch (err) {
    throw new Error(`bench/ingest.ts could not be loaded (${(err as Error).message})`);
  }
  if (typeof mod.benchIngest !== 'function') throw new Error('bench/ingest.ts does not export benchIngest()');
  const sw = stopwatch();
  const r = await mod.benchIngest();
  // Its notes state the target as "ingest/encode ≥ X": show it as a column too.
  const m = /ingest\/encode\s*(?:≥|>=)\s*(\d+(?:\.\d+)?)/.exec(r.notes);
  const targetRatio = m ? Number(m[1]) : null;
  const rows: Row[] = r.rows.map((row) => {
    const ratio = row['ingest/encode'];
    return targetRatio !== null && typeof ratio === 'number' ? { ...row, target: verdict(ratio, '>=', targetRatio) } : { ...row };
  });
  const targets: TargetRow[] =
    targetRatio === null
      ? []
      : r.rows
          .filter((row) => typeof row['ingest/encode'] === 'number')
          .map((row) => ({
            benchmark: `Ingestion, ${row.corpus ?? ''}`,
            target: `ingest ≥ ${targetRatio}× plain tokenizer encode`,
            measured: `${row['ingest/encode']}×`,
            result: (row['ingest/encode'] as number) >= targetRatio ? 'pass' : 'MISS',
          }));
  return { name: r.name, method: r.notes, tables: [{ rows }], notes: [], targets, seconds: sw.elapsedMs() / 1000 };
}

const BENCHMARKS: Array<{ name: string; run: () => Promise<Section> }> = [
  { name: 'Gateway overhead', run: benchGateway },
  { name: 'Retrieval', run: benchRetrieval },
  { name: 'Hybrid retrieval', run: benchRetrievalHybrid },
  { name: 'Document ingestion', run: benchIngestSection },
  { name: 'Hostile uploads', run: benchIngestHostile },
  { name: 'OCR of scans', run: benchOcr },
  { name: 'Start-up', run: benchStartup },
  { name: 'Web page', run: benchPage },
  { name: 'Sign-in', run: benchSignIn },
  { name: 'Conversation search', run: benchChatSearch },
  { name: 'Telemetry overhead', run: benchTelemetry },
  { name: 'Tool step', run: benchToolStep },
  { name: 'Image turns', run: benchImageTurns },
  { name: 'Event loop', run: benchEventLoop },
];

/**
 * `npm run bench` runs every benchmark and rewrites BENCHMARKS.md; `npm run bench -- <word>…` runs
 * only the benchmarks whose name contains one of the words (case-insensitive) and replaces their
 * sections, keeping the others (bench/lib/document.ts). A benchmark that fails in a partial run
 * leaves its section as it was.
 */
async function main(): Promise<number> {
  const words = process.argv.slice(2).filter((a) => !a.startsWith('-'));
  // a word matches a name case-insensitively, a hyphen standing for a space ("event-loop" → "Event loop")
  const norm = (s: string) => s.toLowerCase().replace(/-/g, ' ');
  const chosen = words.length === 0 ? BENCHMARKS : BENCHMARKS.filter((b) => words.some((w) => norm(b.name).includes(norm(w))));
  if (chosen.length === 0) {
    process.stderr.write(`bench: no benchmark matches ${words.join(', ')}; names: ${BENCHMARKS.map((b) => b.name).join(', ')}\n`);
    return 1;
  }
  const file = path.join(ROOT, 'BENCHMARKS.md');
  const run = runStamp(ROOT);
  const total = stopwatch();
  const kept =
    words.length === 0
      ? []
      : readSections(
          file,
          BENCHMARKS.map((b) => b.name),
        ).filter((s) => !chosen.some((b) => b.name === s.bench));
  const previous = new Map(
    readSections(
      file,
      BENCHMARKS.map((b) => b.name),
    ).map((s) => [s.bench, s]),
  );
  const written: StoredSection[] = [];
  let failed = 0;
  for (const b of chosen) {
    const sw = stopwatch();
    process.stderr.write(`bench: ${b.name} …\n`);
    try {
      written.push(storedSection(b.name, await b.run(), run));
      process.stderr.write(`bench: ${b.name} done in ${sw.elapsedS()}\n`);
    } catch (err) {
      failed += 1;
      const msg = err instanceof Error ? (err.stack ?? err.message) : String(err);
      process.stderr.write(`bench: ${b.name} FAILED: ${msg}\n`);
      const old = previous.get(b.name);
      written.push(words.length > 0 && old ? old : failedSection(b.name, msg, run));
    }
  }
  writeDocument(
    file,
    [...kept, ...written],
    BENCHMARKS.map((b) => b.name),
  );
  process.stderr.write(`bench: wrote BENCHMARKS.md (${written.length} section(s), ${total.elapsedS()})\n`);
  return failed === chosen.length ? 1 : 0;
}

// Child processes and pools are closed by each benchmark; exit explicitly so a stray handle cannot keep the run alive.
process.exit(await main());
