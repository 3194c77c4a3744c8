/**
 * `npm run bench`: run every benchmark (each compared with a reference measured in the same run)
 * and rewrite BENCHMARKS.md with the figures. One benchmark failing does not stop the others;
 * the exit code is non-zero only when all of them failed.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { benchChatSearch } from './chat-search.js';
import { benchGateway } from './gateway.js';
import { benchImageTurns } from './image-turn.js';
import { benchIngestHostile } from './ingest-hostile.js';
import { benchPage } from './page.js';
import { ROOT } from './lib/child.js';
import { machine, markdownTable, renderSection, type Row, type Section, type TargetRow } from './lib/report.js';
import { verdict } from './lib/stats.js';
import { stopwatch } from './lib/timer.js';
import { benchRetrieval } from './retrieval.js';
import { benchSignIn } from './sign-in.js';
import { benchRetrievalHybrid } from './retrieval-hybrid.js';
import { benchStartup } from './startup.js';
import { benchTelemetry } from './telemetry-overhead.js';

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
  { name: 'Start-up', run: benchStartup },
  { name: 'Web page', run: benchPage },
  { name: 'Sign-in', run: benchSignIn },
  { name: 'Conversation search', run: benchChatSearch },
  { name: 'Telemetry overhead', run: benchTelemetry },
  { name: 'Image turns', run: benchImageTurns },
];

/**
 * `npm run bench -- <word>…` runs only the benchmarks whose name contains one of the words
 * (case-insensitive) and prints their sections instead of rewriting BENCHMARKS.md, which only a
 * whole run writes (its figures must all come from one run).
 */
async function runSome(words: string[]): Promise<number> {
  const chosen = BENCHMARKS.filter((b) => words.some((w) => b.name.toLowerCase().includes(w.toLowerCase())));
  if (chosen.length === 0) {
    process.stderr.write(`bench: no benchmark matches ${words.join(', ')}; names: ${BENCHMARKS.map((b) => b.name).join(', ')}\n`);
    return 1;
  }
  let failed = 0;
  for (const b of chosen) {
    process.stderr.write(`bench: ${b.name} …\n`);
    try {
      process.stdout.write(`${renderSection(await b.run())}\n`);
    } catch (err) {
      failed += 1;
      process.stderr.write(`bench: ${b.name} FAILED: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    }
  }
  return failed > 0 ? 1 : 0;
}

async function main(): Promise<number> {
  const words = process.argv.slice(2).filter((a) => !a.startsWith('-'));
  if (words.length > 0) return runSome(words);
  const total = stopwatch();
  const started = new Date();
  const m = machine();
  const sections: string[] = [];
  const targets: TargetRow[] = [];
  const failures: string[] = [];
  for (const b of BENCHMARKS) {
    const sw = stopwatch();
    process.stderr.write(`bench: ${b.name} …\n`);
    try {
      const s = await b.run();
      sections.push(renderSection(s));
      targets.push(...(s.targets ?? []));
      process.stderr.write(`bench: ${b.name} done in ${sw.elapsedS()}\n`);
    } catch (err) {
      const msg = err instanceof Error ? (err.stack ?? err.message) : String(err);
      failures.push(b.name);
      sections.push(`## ${b.name}\n\n**Failed** after ${sw.elapsedS()}:\n\n\`\`\`\n${msg}\n\`\`\`\n`);
      process.stderr.write(`bench: ${b.name} FAILED: ${msg}\n`);
    }
  }

  const summary: Row[] = targets.map((t) => ({ benchmark: t.benchmark, target: t.target, measured: t.measured, result: t.result }));
  const doc = [
    '# Benchmarks',
    '',
    '_Written by `npm run bench` (bench/run.ts); do not edit by hand — rerun it. Every figure below was measured in the run described here, and every comparison is against a reference measured in that same run on the same machine._',
    '',
    '| | |',
    '| --- | --- |',
    `| date | ${started
      .toISOString()
      .replace('T', ' ')
      .replace(/\.\d+Z$/, ' UTC')} |`,
    `| CPU | ${m.cpu} |`,
    `| cores | ${m.cores} |`,
    `| memory | ${m.memoryGiB} GiB |`,
    `| OS | ${m.os} |`,
    `| Node.js | ${m.node} |`,
    `| whole run | ${total.elapsedS()} |`,
    '',
    'The load generator, the servers under test and PostgreSQL share these cores: absolute figures are this machine\'s; the ratios and the "added" columns are the point.',
    '',
    '## Targets',
    '',
    summary.length > 0 ? markdownTable(summary) : '_(no targets evaluated)_\n',
    failures.length > 0 ? `**Failed benchmarks:** ${failures.join(', ')} (see below).\n` : '',
    ...sections,
  ].join('\n');
  writeFileSync(path.join(ROOT, 'BENCHMARKS.md'), doc.replace(/\n{3,}/g, '\n\n'));
  process.stderr.write(`bench: wrote BENCHMARKS.md (${total.elapsedS()})\n`);
  return failures.length === BENCHMARKS.length ? 1 : 0;
}

// Child processes and pools are closed by each benchmark; exit explicitly so a stray handle cannot keep the run alive.
process.exit(await main());
