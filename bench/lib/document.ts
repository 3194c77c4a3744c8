/**
 * BENCHMARKS.md as a list of sections, each written by one benchmark of one run and saying which
 * run: a whole run (`npm run bench`) rewrites every section; `npm run bench -- <words>` reruns the
 * benchmarks it names and replaces only their sections, keeping the others as their own runs left
 * them. Every comparison in a section is against a reference measured in that section's run.
 *
 * Each section carries two comments the reader does not see: which benchmark wrote it (so a later
 * run finds it) and its target rows (the summary at the top is gathered from them).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { machine, markdownTable, renderSection, type Row, type Section, type TargetRow } from './report.js';

const MARK = /^<!-- bench: (.+?) -->$/m;
const TARGETS = /^<!-- targets: (.*) -->$/m;

export interface StoredSection {
  bench: string;
  text: string;
}

/** When and on what a section was measured. */
export interface RunStamp {
  started: Date;
  commit: string;
}

export function runStamp(root: string): RunStamp {
  let commit = 'unknown';
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();
    // BENCHMARKS.md itself does not count: a partial run follows an earlier one's uncommitted figures.
    const changed = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: root, encoding: 'utf8' })
      .split('\n')
      .filter((l) => l.trim() !== '' && !l.endsWith('BENCHMARKS.md'));
    if (changed.length > 0) commit += ' + uncommitted changes';
  } catch {
    // not a git checkout: the commit stays unknown
  }
  return { started: new Date(), commit };
}

const utc = (d: Date) =>
  d
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, ' UTC');

/** A benchmark's section as stored: its rendering, the run it came from, and its two comments. */
export function storedSection(bench: string, s: Section, run: RunStamp): StoredSection {
  const [heading, ...rest] = renderSection(s).split('\n');
  const m = machine();
  const stamp = `_Measured ${utc(run.started)} on commit ${run.commit}, Node.js ${m.node}, ${m.cores} cores._`;
  const text = [heading, '', `<!-- bench: ${bench} -->`, `<!-- targets: ${JSON.stringify(s.targets ?? [])} -->`, stamp, ...rest].join('\n');
  return { bench, text };
}

/** A benchmark that threw: its section says so (a whole run), in place of figures. */
export function failedSection(bench: string, message: string, run: RunStamp): StoredSection {
  const text = [
    `## ${bench}`,
    '',
    `<!-- bench: ${bench} -->`,
    '<!-- targets: [] -->',
    `**Failed** in the run of ${utc(run.started)} (commit ${run.commit}):`,
    '',
    '```',
    message,
    '```',
    '',
  ];
  return { bench, text: text.join('\n') };
}

/**
 * A document written before sections said their own run (one header date, one targets table):
 * which of its target rows belong to which benchmark, by the row's first words.
 */
const LEGACY_TARGET_ROWS: Record<string, string> = {
  'Gateway overhead': 'Gateway,',
  Retrieval: 'Retrieval,',
  'Document ingestion': 'Ingestion,',
  'Hostile uploads': 'Hostile upload',
  'Start-up': 'Start-up,',
  'Web page': 'Web page,',
  'Sign-in': 'Sign-in,',
};

/** The target rows of a markdown table (the legacy summary). */
function tableRows(text: string): TargetRow[] {
  return text
    .split('\n')
    .filter((l) => l.startsWith('| ') && !l.startsWith('| benchmark') && !l.startsWith('| ---'))
    .map((l) => l.slice(2, -2).split(' | '))
    .filter((c) => c.length === 4)
    .map(([benchmark, target, measured, result]) => ({
      benchmark: benchmark!,
      target: target!,
      measured: measured!,
      result: result === 'pass' ? 'pass' : 'MISS',
    }));
}

/**
 * The sections of an existing BENCHMARKS.md that a benchmark wrote; anything else (notes appended
 * by hand) is dropped. A section of the older format is recognised by its heading starting with a
 * benchmark's name, and stamped with that document's run date.
 */
export function readSections(file: string, names: string[]): StoredSection[] {
  if (!existsSync(file)) return [];
  const doc = readFileSync(file, 'utf8');
  const parts = doc.split(/^(?=## )/m);
  const out: StoredSection[] = [];
  const legacyDate = /^\| date \| (.+) \|$/m.exec(doc)?.[1];
  const legacyTargets = legacyDate ? tableRows(parts.find((p) => p.startsWith('## Targets')) ?? '') : [];
  for (const text of parts) {
    const bench = MARK.exec(text)?.[1];
    if (bench) {
      out.push({ bench, text: text.trimEnd() + '\n' });
      continue;
    }
    if (!legacyDate || /appended by hand/.test(text.split('\n')[0]!)) continue;
    const heading = text.split('\n')[0]!.slice(3);
    const name = names.find((n) => heading === n || new RegExp(`^${n.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}[ :(]`).test(heading));
    if (!name || out.some((o) => o.bench === name)) continue;
    const prefix = LEGACY_TARGET_ROWS[name];
    const targets = prefix ? legacyTargets.filter((t) => t.benchmark.startsWith(prefix)) : [];
    const [first, ...rest] = text.trimEnd().split('\n');
    const stamp = `_Measured in the whole run of ${legacyDate} (before sections said their own run)._`;
    out.push({ bench: name, text: [first, '', `<!-- bench: ${name} -->`, `<!-- targets: ${JSON.stringify(targets)} -->`, stamp, ...rest].join('\n') + '\n' });
  }
  return out;
}

/** Write the document: a header, the targets of every section, then the sections in `order`. */
export function writeDocument(file: string, sections: StoredSection[], order: string[]): void {
  const sorted = [...sections].sort((a, b) => order.indexOf(a.bench) - order.indexOf(b.bench));
  const targets: TargetRow[] = sorted.flatMap((s) => JSON.parse(TARGETS.exec(s.text)?.[1] ?? '[]') as TargetRow[]);
  const m = machine();
  const summary: Row[] = targets.map((t) => ({ benchmark: t.benchmark, target: t.target, measured: t.measured, result: t.result }));
  const doc = [
    '# Benchmarks',
    '',
    '_Written by `npm run bench` (bench/run.ts); do not edit by hand — rerun it. Each section says the run it comes from (a whole run writes them all; `npm run bench -- <name>` rewrites only the sections it names), and every comparison in a section is against a reference measured in that same run on the same machine._',
    '',
    `Machine: ${m.cpu}, ${m.cores} cores, ${m.memoryGiB} GiB, ${m.os}. The load generator, the servers under test and PostgreSQL share these cores: absolute figures are this machine's; the ratios and the "added" columns are the point.`,
    '',
    '## Targets',
    '',
    summary.length > 0 ? markdownTable(summary) : '_(no targets evaluated)_\n',
    ...sorted.map((s) => s.text),
  ].join('\n');
  writeFileSync(file, doc.replace(/\n{3,}/g, '\n\n'));
}
