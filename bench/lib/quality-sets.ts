/**
 * The labelled sets of bench/retrieval-data/ and the measures the quality benchmark reports:
 * recall@5, MRR@10 and nDCG@10 (binary relevance: a chunk of the expected file holding `expect`).
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './child.js';
import type { Row } from './report.js';
import { round } from './stats.js';
import { K_MRR, K_NDCG, K_RECALL, scoreRanking, type RankScores } from '../../src/retrieval/metrics.js';

export const DATA_DIR = path.join(ROOT, 'bench/retrieval-data');
const SETS = [
  { name: 'hard.json', label: 'harder set' },
  { name: 'questions.json', label: 'first set' },
];
export { K_MRR, K_NDCG, K_RECALL };

export type Kind = 'easy' | 'hard' | 'followup';
export const KINDS: readonly Kind[] = ['easy', 'hard', 'followup'];

export interface Labelled {
  set: string;
  id: string;
  file: string;
  kind: Kind;
  question: string;
  history: string[];
  expect: string;
}

export interface LabelledSet {
  label: string;
  questions: Labelled[];
  docs: Array<{ file: string; path: string }>;
}

export function mimeOf(filename: string): string {
  const map: Record<string, string> = {
    '.txt': 'text/plain',
    '.md': 'text/markdown',
    '.html': 'text/html',
    '.pdf': 'application/pdf',
    '.docx': 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
    '.csv': 'text/csv',
    '.json': 'application/json',
  };
  return map[path.extname(filename).toLowerCase()] ?? 'application/octet-stream';
}

export const norm = (s: string): string => s.replace(/\s+/g, ' ').trim().toLowerCase();

export function loadSets(): LabelledSet[] {
  const out: LabelledSet[] = [];
  for (const s of SETS) {
    const p = path.join(DATA_DIR, s.name);
    if (!existsSync(p)) continue;
    const raw = JSON.parse(readFileSync(p, 'utf8')) as { documents: Array<{ file: string; path?: string }>; questions: Array<Record<string, unknown>> };
    const docs = raw.documents.map((d) => ({ file: d.file, path: path.join(ROOT, d.path ?? path.join('bench/retrieval-data', d.file)) }));
    const questions = raw.questions.map((q) => ({
      set: s.label,
      id: String(q.id),
      file: String(q.file),
      // the first set's questions are all phrased differently from their passage
      kind: (q.kind as Kind | undefined) ?? 'hard',
      question: String(q.question),
      history: (q.history as string[] | undefined) ?? [],
      expect: String(q.expect),
    }));
    out.push({ label: s.label, questions, docs });
  }
  return out;
}

/** One question's figures from a ranked list of chunk ids and the ids that answer it (src/retrieval/metrics.ts). */
export type Scores = RankScores;
export const score = (ranked: readonly number[], relevant: ReadonlySet<number>): Scores => scoreRanking(ranked, relevant);

/** A method's row: recall@5, MRR@10, nDCG@10 per kind of question and over all of them. */
export function summaryRow(method: string, questions: readonly Labelled[], scores: readonly Scores[], counts?: Map<string, number>): Row {
  const row: Row = { method };
  for (const k of [...KINDS, 'all'] as const) {
    const idx = questions.map((q, i) => (k === 'all' || q.kind === k ? i : -1)).filter((i) => i >= 0);
    if (idx.length === 0) continue;
    counts?.set(k, idx.length);
    const mean = (f: (s: Scores) => number) => round(idx.reduce((t, i) => t + f(scores[i]!), 0) / idx.length, 3);
    row[`${k} R@${K_RECALL}`] = mean((s) => s.recall);
    row[`${k} MRR@${K_MRR}`] = mean((s) => s.rr);
    row[`${k} nDCG@${K_NDCG}`] = mean((s) => s.ndcg);
  }
  return row;
}
