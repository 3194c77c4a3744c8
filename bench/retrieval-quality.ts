/**
 * Retrieval quality on the labelled sets of bench/retrieval-data/: recall@5, MRR@10 and nDCG@10,
 * split easy / hard (paraphrased) / follow-up, for — in the same run, over the same stored chunks —
 *
 * - full text: RetrievalRepo.search as PlusContext calls it (follow-ups with the previous
 *   question's key terms carried; and without, to show what carrying adds);
 * - vector alone: the chunks nearest to the question's vector (retrieval/vector.ts), with a real
 *   embedding model, Universal Sentence Encoder Lite (bench/lib/use-lite.ts), which embeds every
 *   chunk as the embedding worker would and the question as EmbeddingsService.queryVector does
 *   (a follow-up with its previous question: retrieval/vector.ts, followUpVector);
 * - hybrid: the two lists fused as PlusContext fuses them (retrieval/fusion.ts, hybridRank);
 * - a plain BM25 library (MiniSearch, default options) indexing the same stored chunk texts, as
 *   the reference each figure stands beside.
 *
 * Every document of a set goes into ONE Plus entry through the real multipart API, so a question
 * also competes with chunks of unrelated documents.
 * Run alone: npx tsx bench/retrieval-quality.ts
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { sql } from 'drizzle-orm';
import MiniSearch from 'minisearch';
import type { Principal } from '../src/policy/index.js';
import { hybridRank, lexicalTop } from '../src/retrieval/fusion.js';
import { RetrievalRepo, type Retrieved, type ScoredChunk } from '../src/retrieval/repo.js';
import { cosinesOf, followUpVector, vectorSearch } from '../src/retrieval/vector.js';
import type { Part } from '../test/helpers/multipart.js';
import { HttpClient } from './lib/http.js';
import { K_MRR, K_RECALL, loadSets, mimeOf, norm, score, summaryRow, type Labelled, type LabelledSet, type Scores } from './lib/quality-sets.js';
import type { Row, Table } from './lib/report.js';
import { useLite, type TextEmbedder } from './lib/use-lite.js';
import { now } from './lib/timer.js';
import { newTeam, postPlus, startAtrium } from './retrieval.js';

/** what each ranked list contributes to a fusion (PlusContext's CANDIDATES) */
const CANDIDATES = 50;

export interface QualityResult {
  tables: Table[];
  notes: string[];
}

type Atrium = Awaited<ReturnType<typeof startAtrium>>;

export async function retrievalQuality(): Promise<QualityResult> {
  const sets = loadSets();
  if (sets.length === 0) return { tables: [], notes: ['Quality skipped: no labelled set in bench/retrieval-data/.'] };
  const atrium = await startAtrium(null);
  const tables: Table[] = [];
  const notes: string[] = [];
  const misses: Row[] = [];
  let embedder: TextEmbedder | null = null;
  try {
    embedder = await useLite();
  } catch (err) {
    notes.push(`USE Lite could not start (${(err as Error).message}): vector and hybrid rows left out.`);
  }
  try {
    for (const set of sets) {
      // a connection per set: the server closes an idle keep-alive one while a set is measured
      const client = new HttpClient(1);
      try {
        const { key } = await newTeam(client, atrium.url);
        tables.push(await measureSet(atrium, client, key, set, embedder, misses, notes));
      } finally {
        client.close();
      }
    }
  } finally {
    await atrium.close();
  }
  if (misses.length > 0) tables.push({ title: `Misses of hybrid (full text without a model) — not in the top ${K_RECALL}`, rows: misses });
  notes.push(
    `Quality: each set's documents ingested into one entry of their own through POST /api/v1/plus (PGlite on disk). A hit: a chunk of the expected file containing \`expect\` (whitespace collapsed, case-insensitive); R@${K_RECALL} counts questions with a hit in the top ${K_RECALL}, MRR@${K_MRR} averages 1/rank of the first hit in the top ${K_MRR}, nDCG@10 counts every answering chunk (binary relevance). Vector and hybrid use USE Lite (512 dimensions, in-process, CPU) as the team's embedding model.`,
  );
  return { tables, notes };
}

/** The entry's chunks embedded by `embedder` and stored as the worker stores them, under a model of the team's. */
async function storeVectors(atrium: Atrium, key: string, plusId: string, chunks: Array<{ id: number; fileId: string; text: string }>, embedder: TextEmbedder) {
  const app = atrium.built;
  const caller = (await app.services.teams.authenticate(key)) as Principal;
  const model = await app.services.models.create(
    caller,
    { name: `bench ${embedder.name}`, apiBase: 'OPENAI', url: 'http://127.0.0.1:9/v1', baseModel: 'use-lite', kind: 'embedding' } as unknown as Parameters<
      typeof app.services.models.create
    >[1],
    { system: false },
  );
  const started = now();
  const vectors = await embedder.embed(chunks.map((c) => c.text));
  const seconds = (now() - started) / 1000;
  const db = app.database.db;
  for (let i = 0; i < chunks.length; i += 50) {
    const rows = chunks
      .slice(i, i + 50)
      .map(
        (c, j) => sql`(${c.id}, ${caller.teamId}::uuid, ${c.fileId}::uuid, ${plusId}::uuid, ${model.id}::uuid, ${`{${vectors[i + j]!.join(',')}}`}::real[])`,
      );
    await db.execute(sql`insert into plus_chunk_vectors (chunk_id, team_id, file_id, plus_id, model_id, embedding) values ${sql.join(rows, sql`, `)}`);
  }
  return { modelId: model.id, seconds };
}

async function measureSet(atrium: Atrium, client: HttpClient, key: string, set: LabelledSet, embedder: TextEmbedder | null, misses: Row[], notes: string[]) {
  const parts: Part[] = [{ name: 'title', value: set.label }];
  for (const d of set.docs) parts.push({ name: 'files', filename: d.file, contentType: mimeOf(d.file), data: readFileSync(d.path) });
  const ingestStart = now();
  const entry = await postPlus(client, atrium.url, key, parts);
  const ingestS = (now() - ingestStart) / 1000;
  const plusId = entry.id as string;
  const fileIdOf = new Map((entry.files as Array<{ id: string; filename: string }>).map((f) => [f.filename, f.id]));
  const db = atrium.built.database.db;
  const repo = new RetrievalRepo();
  const { teamId } = (await atrium.built.services.teams.authenticate(key)) as Principal;
  const scope = { teamId, plusIds: [plusId], fileIds: [] };
  const chunks = (
    (await db.execute(
      sql`select id, file_id, file_data_processed as text from plus_chunks where team_id = ${teamId}::uuid and plus_id = ${plusId}::uuid order by id`,
    )) as unknown as {
      rows: Array<{ id: number | string; file_id: string; text: string }>;
    }
  ).rows.map((r) => ({ id: Number(r.id), fileId: r.file_id, text: r.text }));
  const relevant = (q: Labelled) => new Set(chunks.filter((c) => c.fileId === fileIdOf.get(q.file) && norm(c.text).includes(norm(q.expect))).map((c) => c.id));
  let note = `${set.label}: ${set.docs.length} documents, ${chunks.length} chunks, ${set.questions.length} questions; ingested in ${ingestS.toFixed(1)} s`;

  // the same stored chunks, indexed by a plain BM25 library
  const mini = new MiniSearch<{ id: number; text: string }>({ fields: ['text'], storeFields: [] });
  mini.addAll(chunks.map((c) => ({ id: c.id, text: c.text })));
  const miniRanked = (text: string, stop?: ReadonlySet<string>) =>
    mini
      .search(text, stop ? { processTerm: (term) => (stop.has(term.toLowerCase()) ? null : term.toLowerCase()) } : {})
      .slice(0, K_MRR)
      .map((r) => Number(r.id));
  // the question's words PostgreSQL's English configuration drops as stop words (what full text never searches for)
  const stopWords = async (text: string) =>
    new Set(
      (
        (await db.execute(
          sql`select w from unnest(regexp_split_to_array(lower(${text}), '[^a-z0-9]+')) w where w <> '' and to_tsvector('english', w) = ''::tsvector`,
        )) as unknown as { rows: Array<{ w: string }> }
      ).rows.map((r) => r.w),
    );

  const vectors = embedder ? await storeVectors(atrium, key, plusId, chunks, embedder) : null;
  if (vectors) note += `; ${chunks.length} chunks embedded by ${embedder!.name} in ${vectors.seconds.toFixed(1)} s`;
  notes.push(`${note}.`);
  const vectorOps = await atrium.built.database.vectorOps();
  const previous = (q: Labelled) => q.history.at(-1) ?? null;

  // every list once per question; the methods are read from them
  const lists: Array<{
    q: Labelled;
    relevant: Set<number>;
    lexical: Retrieved;
    alone: Retrieved;
    near: ScoredChunk[];
    cosines: Map<number, number>;
    stop: Set<string>;
  }> = [];
  for (const q of set.questions) {
    const lexical = await repo.search(db, { scope, question: { text: q.question, carry: previous(q) } }, CANDIDATES);
    const alone = q.history.length > 0 ? await repo.search(db, { scope, question: { text: q.question } }, K_MRR) : lexical;
    let near: ScoredChunk[] = [];
    let cosines = new Map<number, number>();
    if (vectors && embedder) {
      const texts = previous(q) ? [q.question, previous(q)!] : [q.question];
      const [own, carried] = await embedder.embed(texts);
      const vq = { modelId: vectors.modelId, vector: followUpVector(own!, carried ?? null) };
      near = await vectorSearch(db, scope, vq, CANDIDATES, vectorOps);
      const seen = new Set(near.map((c) => c.chunkId));
      cosines = await cosinesOf(
        db,
        vq,
        lexicalTop(lexical).filter((id) => !seen.has(id)),
        vectorOps,
      );
    }
    lists.push({ q, relevant: relevant(q), lexical, alone, near, cosines, stop: await stopWords(q.question) });
  }
  if (process.env.QUALITY_DUMP) {
    const file = `${process.env.QUALITY_DUMP}.${set.label.replace(/\W+/g, '-')}.json`;
    const slim = (cs: readonly ScoredChunk[]) => cs.map((c) => [c.chunkId, c.score, c.fileId, c.tokenSize]);
    const dump = lists.map((l) => ({ q: l.q, relevant: [...l.relevant], lexical: slim(l.lexical.chunks), leading: l.lexical.leading, near: slim(l.near) }));
    const files = Object.fromEntries([...new Set(chunks.map((c) => c.fileId))].map((f) => [f, chunks.filter((c) => c.fileId === f).length]));
    writeFileSync(file, JSON.stringify({ files, dump }));
  }

  const ids = (cs: readonly ScoredChunk[]) => cs.slice(0, K_MRR).map((c) => c.chunkId);
  const hasFollowups = set.questions.some((q) => q.history.length > 0);
  const methods: Array<{ name: string; ranked: (l: (typeof lists)[number]) => number[]; misses?: true }> = [
    { name: 'Full text', ranked: (l) => ids(l.lexical.chunks), ...(vectors ? {} : { misses: true as const }) },
    ...(hasFollowups ? [{ name: 'Full text, follow-ups without carried terms', ranked: (l: (typeof lists)[number]) => ids(l.alone.chunks) }] : []),
    { name: 'MiniSearch BM25 (reference)', ranked: (l) => miniRanked(l.q.question) },
    { name: 'MiniSearch BM25, stop words dropped (PostgreSQL English list)', ranked: (l) => miniRanked(l.q.question, l.stop) },
    ...(hasFollowups
      ? [
          {
            name: 'MiniSearch BM25, follow-ups with the previous question appended',
            ranked: (l: (typeof lists)[number]) => miniRanked([previous(l.q), l.q.question].filter(Boolean).join(' ')),
          },
        ]
      : []),
    ...(vectors
      ? [
          { name: `Vector alone (${embedder!.name})`, ranked: (l: (typeof lists)[number]) => ids(l.near) },
          {
            name: `Hybrid (full text + ${embedder!.name})`,
            ranked: (l: (typeof lists)[number]) => ids(hybridRank(l.lexical, l.near, l.cosines)),
            misses: true as const,
          },
        ]
      : []),
  ];
  const rows: Row[] = [];
  const counts = new Map<string, number>();
  for (const m of methods) {
    const scores: Scores[] = lists.map((l) => score(m.ranked(l), l.relevant));
    if (m.misses)
      scores.forEach((s, i) => {
        const q = lists[i]!.q;
        if (!s.recall) misses.push({ set: q.set, id: q.id, kind: q.kind, question: q.question, 'rank (top 10)': s.first > 0 ? s.first : '—' });
      });
    rows.push(summaryRow(m.name, set.questions, scores, counts));
  }
  const label = [...counts]
    .filter(([k]) => k !== 'all')
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
  return { title: `Retrieval quality, ${set.label} (${label})`, rows };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { markdownTable } = await import('./lib/report.js');
  const r = await retrievalQuality();
  for (const t of r.tables) console.log(`\n**${t.title}**\n\n${markdownTable(t.rows)}`);
  console.log(r.notes.join('\n'));
}
