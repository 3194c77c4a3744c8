/**
 * Retrieval quality on the labelled sets of bench/retrieval-data/: recall@5 and MRR@10, split
 * easy / hard (paraphrased) / follow-up, for — in the same run, over the same stored chunks —
 *
 * - the ranking under test: RetrievalRepo.retrieve as PlusService calls it (follow-ups with the
 *   previous question's key terms carried, and without, to show what carrying adds);
 * - the ranking before BM25 scoring ("before"), reproduced here as it was: the sum of the idf
 *   ln(1 + n/df) of the chosen lexemes a chunk holds, times 1 + ts_rank, over the text alone
 *   (no headings), equal scores in document order;
 * - a plain BM25 library (MiniSearch, default options) indexing the same stored chunk texts.
 *
 * Every document of the sets goes into ONE Plus entry through the real multipart API, so a
 * question also competes with chunks of unrelated documents.
 * Run alone: npx tsx bench/retrieval-quality.ts
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import MiniSearch from 'minisearch';
import type { Executor } from '../src/db/client.js';
import { chooseTerms, quoteLexeme, rankQuery, type TermChoice } from '../src/retrieval/query.js';
import { RetrievalRepo } from '../src/retrieval/repo.js';
import type { Part } from '../test/helpers/multipart.js';
import { ROOT } from './lib/child.js';
import { HttpClient } from './lib/http.js';
import type { Row, Table } from './lib/report.js';
import { round } from './lib/stats.js';
import { now } from './lib/timer.js';
import { newTeam, postPlus, startAtrium } from './retrieval.js';

const DATA_DIR = path.join(ROOT, 'bench/retrieval-data');
const SETS = [
  { name: 'hard.json', label: 'harder set' },
  { name: 'questions.json', label: 'first set' },
];
const K_RECALL = 5;
const K_MRR = 10;

type Kind = 'easy' | 'hard' | 'followup';
interface Labelled {
  set: string;
  id: string;
  file: string;
  kind: Kind;
  question: string;
  history: string[];
  expect: string;
}
interface Doc {
  file: string;
  path: string;
}

function mimeOf(filename: string): string {
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

const norm = (s: string): string => s.replace(/\s+/g, ' ').trim().toLowerCase();

interface LabelledSet {
  label: string;
  questions: Labelled[];
  docs: Doc[];
}

function loadSets(): LabelledSet[] {
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

/** The ranking before BM25 scoring, over the text alone: term statistics computed from the chunks' text vectors. */
async function legacyRanked(db: Executor, plusId: string, question: string, limit: number): Promise<number[]> {
  const vectors = `select to_tsvector('english', file_data_processed) from plus_chunks where plus_id = '${plusId}'`;
  const stats = (await db.execute(sql`
    select s.word as lexeme, s.ndoc as df, (select count(*) from plus_chunks where plus_id = ${plusId}::uuid)::int as n
    from ts_stat(${vectors}) s
    where s.word = any(tsvector_to_array(to_tsvector('english', ${question})))`)) as unknown as { rows: Array<{ lexeme: string; df: number; n: number }> };
  const n = stats.rows[0]?.n ?? 0;
  const picked = chooseTerms(
    stats.rows.map((r) => ({ lexeme: r.lexeme, df: Number(r.df) })),
    n,
  );
  if (!picked) return [];
  const choice: TermChoice = { ...picked, idf: picked.rank.map((l) => Math.log(1 + n / Number(stats.rows.find((r) => r.lexeme === l)!.df))) };
  const ids: number[] = [];
  for (const step of choice.steps) {
    if (ids.length >= limit) break;
    const idf = choice.rank.map((l, i) => sql`case when c.v @@ cast(${quoteLexeme(l)} as tsquery) then ${choice.idf[i]}::float8 else 0 end`);
    const res = (await db.execute(sql`
      select c.id, (${sql.join(idf, sql` + `)}) * (1 + ts_rank(c.v, cast(${rankQuery(choice)} as tsquery), 1)) as score
      from (select id, to_tsvector('english', file_data_processed) as v from plus_chunks where plus_id = ${plusId}::uuid) c
      where c.v @@ cast(${step.match} as tsquery)
      order by score desc, c.id
      limit ${limit - ids.length}`)) as unknown as { rows: Array<{ id: number | string }> };
    ids.push(...res.rows.map((r) => Number(r.id)));
  }
  return ids;
}

interface Tally {
  n: number;
  hits: number;
  rr: number;
}
const tally = (): Tally => ({ n: 0, hits: 0, rr: 0 });

export interface QualityResult {
  tables: Table[];
  notes: string[];
}

export async function retrievalQuality(): Promise<QualityResult> {
  const sets = loadSets();
  if (sets.length === 0) return { tables: [], notes: ['Quality skipped: no labelled set in bench/retrieval-data/.'] };
  const atrium = await startAtrium(null);
  const tables: Table[] = [];
  const notes: string[] = [];
  const misses: Row[] = [];
  try {
    for (const set of sets) {
      // a connection per set: the server closes an idle keep-alive one while a set is measured
      const client = new HttpClient(1);
      try {
        const { key } = await newTeam(client, atrium.url);
        tables.push(await measureSet(atrium, client, key, set, misses, notes));
      } finally {
        client.close();
      }
    }
  } finally {
    await atrium.close();
  }
  if (misses.length > 0) tables.push({ title: `Misses of the ranking under test (not in the top ${K_RECALL})`, rows: misses });
  notes.push(
    `Quality: each set's documents ingested into one entry of their own through POST /api/v1/plus (PGlite on disk). A hit: a chunk of the expected file containing \`expect\` (whitespace collapsed, case-insensitive); recall@${K_RECALL} counts hits in the top ${K_RECALL}, MRR@${K_MRR} averages 1/rank of the first hit in the top ${K_MRR}.`,
  );
  return { tables, notes };
}

async function measureSet(
  atrium: Awaited<ReturnType<typeof startAtrium>>,
  client: HttpClient,
  key: string,
  set: LabelledSet,
  misses: Row[],
  notes: string[],
): Promise<Table> {
  const parts: Part[] = [{ name: 'title', value: set.label }];
  for (const d of set.docs) parts.push({ name: 'files', filename: d.file, contentType: mimeOf(d.file), data: readFileSync(d.path) });
  const ingestStart = now();
  const entry = await postPlus(client, atrium.url, key, parts);
  const ingestS = (now() - ingestStart) / 1000;
  const plusId = entry.id as string;
  const files = entry.files as Array<{ id: string; filename: string }>;
  const fileIdOf = new Map(files.map((f) => [f.filename, f.id]));
  const db = atrium.built.database.db;
  const repo = new RetrievalRepo();
  const scope = { plusIds: [plusId], fileIds: [] };

  // the same stored chunks, indexed by a plain BM25 library
  const chunks = (
    (await db.execute(sql`select id, file_id, file_data_processed as text from plus_chunks where plus_id = ${plusId}::uuid order by id`)) as unknown as {
      rows: Array<{ id: number | string; file_id: string; text: string }>;
    }
  ).rows.map((r) => ({ id: Number(r.id), fileId: r.file_id, text: r.text }));
  notes.push(`${set.label}: ${set.docs.length} documents, ${chunks.length} chunks, ${set.questions.length} questions; ingested in ${ingestS.toFixed(1)} s.`);
  const byId = new Map(chunks.map((c) => [c.id, c]));
  const mini = new MiniSearch<{ id: number; text: string }>({ fields: ['text'], storeFields: [] });
  mini.addAll(chunks.map((c) => ({ id: c.id, text: c.text })));

  type Method = { name: string; ranked: (q: Labelled) => Promise<number[]> };
  const previous = (q: Labelled) => q.history.at(-1) ?? null;
  const hasFollowups = set.questions.some((q) => q.kind === 'followup');
  const methods: Method[] = [
    {
      name: 'Atrium (this branch)',
      ranked: async (q) => (await repo.retrieve(db, scope, { text: q.question, carry: previous(q) }, K_MRR)).chunks.map((c) => c.chunkId),
    },
    ...(hasFollowups
      ? [
          {
            name: 'Atrium, follow-ups without carried terms',
            ranked: async (q: Labelled) => (await repo.retrieve(db, scope, { text: q.question }, K_MRR)).chunks.map((c) => c.chunkId),
          },
        ]
      : []),
    { name: 'before BM25 (idf sum × (1 + ts_rank))', ranked: async (q) => legacyRanked(db, plusId, q.question, K_MRR) },
    {
      name: 'MiniSearch BM25 (reference)',
      ranked: async (q) =>
        mini
          .search(q.question)
          .slice(0, K_MRR)
          .map((r) => Number(r.id)),
    },
    ...(hasFollowups
      ? [
          {
            name: 'MiniSearch BM25, follow-ups with the previous question appended',
            ranked: async (q: Labelled) =>
              mini
                .search([previous(q), q.question].filter(Boolean).join(' '))
                .slice(0, K_MRR)
                .map((r) => Number(r.id)),
          },
        ]
      : []),
  ];
  const kinds: Kind[] = ['easy', 'hard', 'followup'];
  const rows: Row[] = [];
  const counts = new Map<string, number>();
  for (const m of methods) {
    const t = new Map<string, Tally>();
    for (const q of set.questions) {
      const want = norm(q.expect);
      const fileId = fileIdOf.get(q.file);
      const ids = await m.ranked(q);
      const at = ids.findIndex((id) => {
        const c = byId.get(id);
        return c !== undefined && c.fileId === fileId && norm(c.text).includes(want);
      });
      for (const k of [q.kind, 'all']) {
        const x = t.get(k) ?? tally();
        x.n++;
        if (at >= 0 && at < K_RECALL) x.hits++;
        if (at >= 0 && at < K_MRR) x.rr += 1 / (at + 1);
        t.set(k, x);
      }
      if (m === methods[0] && !(at >= 0 && at < K_RECALL))
        misses.push({ set: q.set, id: q.id, kind: q.kind, question: q.question, 'rank (top 10)': at >= 0 ? at + 1 : '—' });
    }
    const row: Row = { method: m.name };
    for (const k of [...kinds, 'all']) {
      const x = t.get(k);
      if (!x) continue;
      counts.set(k, x.n);
      row[`${k} recall@${K_RECALL}`] = round(x.hits / x.n, 3);
      row[`${k} MRR@${K_MRR}`] = round(x.rr / x.n, 3);
    }
    rows.push(row);
  }
  const label = kinds
    .filter((k) => counts.has(k))
    .map((k) => `${k} ${counts.get(k)}`)
    .join(', ');
  return { title: `Retrieval quality, ${set.label} (${label})`, rows };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { markdownTable } = await import('./lib/report.js');
  const r = await retrievalQuality();
  for (const t of r.tables) console.log(`\n**${t.title}**\n\n${markdownTable(t.rows)}`);
  console.log(r.notes.join('\n'));
}
