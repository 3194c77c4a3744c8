/** The shape every benchmark returns, and its rendering as markdown. */
import os from 'node:os';

export type Row = Record<string, string | number>;

export interface Table {
  title?: string;
  rows: Row[];
}

export interface TargetRow {
  benchmark: string;
  target: string;
  measured: string;
  result: 'pass' | 'MISS';
}

export interface Section {
  name: string;
  /** one paragraph: what is compared with what */
  method: string;
  tables: Table[];
  /** free-form remarks: misses, caveats, findings */
  notes: string[];
  /** one row per target: what, measured, pass/MISS — gathered into the summary at the top */
  targets?: TargetRow[];
  /** raw markdown appended after the notes (query plans, …) */
  details?: string;
  /** wall-clock time the benchmark took */
  seconds?: number;
}

function cell(v: string | number | undefined): string {
  if (v === undefined) return '';
  const s = typeof v === 'number' ? (Number.isFinite(v) ? String(v) : '—') : v;
  return s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

export function markdownTable(rows: Row[]): string {
  if (rows.length === 0) return '_(no rows)_\n';
  const cols: string[] = [];
  for (const r of rows) for (const k of Object.keys(r)) if (!cols.includes(k)) cols.push(k);
  const numeric = cols.map((c) => rows.every((r) => r[c] === undefined || typeof r[c] === 'number'));
  const lines = [
    `| ${cols.map(cell).join(' | ')} |`,
    `| ${numeric.map((n) => (n ? '---:' : '---')).join(' | ')} |`,
    ...rows.map((r) => `| ${cols.map((c) => cell(r[c])).join(' | ')} |`),
  ];
  return `${lines.join('\n')}\n`;
}

export function renderSection(s: Section): string {
  const out = [`## ${s.name}\n`, `${s.method}\n`];
  for (const t of s.tables) {
    if (t.title) out.push(`**${t.title}**\n`);
    out.push(markdownTable(t.rows));
  }
  if (s.notes.length > 0) out.push(`${s.notes.map((n) => `- ${n}`).join('\n')}\n`);
  if (s.details) out.push(s.details);
  if (s.seconds !== undefined) out.push(`_Benchmark wall time: ${s.seconds.toFixed(1)} s._\n`);
  return out.join('\n');
}

export interface Machine {
  cpu: string;
  cores: number;
  memoryGiB: number;
  os: string;
  node: string;
}

export function machine(): Machine {
  const cpus = os.cpus();
  return {
    cpu: cpus[0]?.model.trim() ?? 'unknown',
    cores: cpus.length,
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    os: `${os.type()} ${os.release()} (${os.arch()})`,
    node: process.version,
  };
}
