/**
 * Hybrid retrieval benchmark: `context-for-prompt` over an entry of 100k chunks, full-text only
 * against hybrid (full-text + vector search fused by reciprocal rank), same entry, same
 * questions, same run — and the vector search's own SQL, with pgvector's operator and with the
 * plain real[] fallback, on PGlite (on disk) and on PostgreSQL.
 *
 * The chunks are bench/retrieval.ts' (seedChunks: 100 files × 1000 chunks of real sentences);
 * each gets a random unit vector of DIMS dimensions, written in SQL (as the worker would store
 * them; embedding 100k chunks through a provider is not what is measured). The question's vector
 * comes from the stand-in provider over loopback HTTP (test/support/standin-provider.ts), as
 * a real embedding endpoint's would, so the hybrid figure includes that round trip.
 *
 * Run alone: npm run bench -- hybrid
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { buildApp, type App } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import type { Principal } from '../src/policy/index.js';
import { vectorSearch } from '../src/retrieval/vector.js';
import { ADMIN_KEY } from '../test/helpers/app.js';
import { startStandInProvider } from '../test/support/standin-provider.js';
import { loadSentences } from './lib/corpus.js';
import { createThrowawayDb, isDb } from './lib/pg.js';
import type { Row, Section, TargetRow } from './lib/report.js';
import { round, summarize } from './lib/stats.js';
import { now, stopwatch } from './lib/timer.js';
import { makeQuestions, seedChunks } from './retrieval.js';

const DIMS = 384;
const QUESTIONS = 100;
const WARMUP = 5;
/** per backend and mode, the loop stops after QUESTIONS or this long */
const LOOP_BUDGET_MS = 30_000;
/** the real[] fallback is slow at 100k: fewer samples */
const FALLBACK_BUDGET_MS = 20_000;
const CANDIDATES = 50;
/**
 * Every timed path gets at least this many samples, past its time budget if need be: a path
 * slower than budget ÷ warm-up (the real[] fallback at 100k chunks) used to spend the whole
 * budget warming up and print an empty row.
 */
const MIN_SAMPLES = 3;
/** the team-model cache's TTL (EmbeddingsService) is 2 s: wait it out between phases */
const CACHE_WAIT_MS = 2_100;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function startAtrium(databaseUrl: string | null): Promise<{ built: App; close(): Promise<void> }> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'atrium-bench-hybrid-'));
  // pgvector registered from the first start (a new folder would register it from its second: db/files.ts)
  const base = loadConfig({
    DATA_DIR: dataDir,
    ADMIN_API_KEY: ADMIN_KEY,
    SECRET_KEY: 'test-secret-key-0123456789',
    LOG_LEVEL: 'silent',
    VECTOR_EXTENSION: 'on',
  });
  // no background worker: the vectors are written by the benchmark
  const built = await buildApp({ ...base, databaseUrl, embeddings: { ...base.embeddings, workerIntervalMs: 0 } }, { logger: false });
  return {
    built,
    async close() {
      await built.app.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Random unit vectors for every chunk of the entry, in id ranges (one statement each). */
async function seedVectors(app: App, teamId: string, plusId: string, modelId: string): Promise<number> {
  const db = app.database.db;
  const started = now();
  const ids = (await db.execute(
    sql`select min(id)::bigint as lo, max(id)::bigint as hi from plus_chunks where team_id = ${teamId}::uuid and plus_id = ${plusId}::uuid`,
  )) as unknown as {
    rows: Array<{ lo: string; hi: string }>;
  };
  const lo = Number(ids.rows[0]!.lo);
  const hi = Number(ids.rows[0]!.hi);
  const step = 5_000;
  for (let a = lo; a <= hi; a += step) {
    await db.execute(sql`
      insert into plus_chunk_vectors (chunk_id, team_id, file_id, plus_id, model_id, embedding)
      select c.id, c.team_id, c.file_id, c.plus_id, ${modelId}::uuid, v.e
      from plus_chunks c,
      lateral (
        select array_agg(x / n) as e from (
          select x, sqrt(sum(x * x) over ()) as n from (select (random() - 0.5)::real as x from generate_series(1, ${DIMS}) where c.id > 0) r
        ) u
      ) v
      where c.team_id = ${teamId}::uuid and c.plus_id = ${plusId}::uuid and c.id between ${a} and ${a + step - 1}`);
  }
  await db.execute(sql`insert into plus_file_embeddings (file_id, team_id, model_id, status)
    select f.id, f.team_id, ${modelId}::uuid, 'ready' from plus_files f where f.team_id = ${teamId}::uuid and f.plus_id = ${plusId}::uuid`);
  await db.execute(sql`analyze plus_chunk_vectors`);
  return (now() - started) / 1000;
}

interface BackendResult {
  rows: Row[];
  notes: string[];
  targets: TargetRow[];
}

async function onBackend(label: string, databaseUrl: string | null, sentences: string[], questions: string[]): Promise<BackendResult> {
  const atrium = await startAtrium(databaseUrl);
  const standIn = await startStandInProvider();
  const notes: string[] = [];
  try {
    const app = atrium.built;
    const db = app.database.db;
    const team = await app.services.teams.createTeam((await app.services.teams.authenticate(ADMIN_KEY)) as Principal, {
      name: `bench-${randomUUID().slice(0, 8)}`,
      ownerName: 'Bench Owner',
      ownerEmail: `bench-${randomUUID()}@example.com`,
    });
    const caller = (await app.services.teams.authenticate(team.apiKey)) as Principal;
    const plusId = randomUUID();
    await app.services.plus.save(caller, { id: plusId, title: 'Engineering handbook', isPublic: true }, []);
    const seeded = await seedChunks(app, caller.teamId, plusId, caller.userId, sentences);
    await db.execute(sql`analyze plus_chunks`);
    await db.execute(sql`analyze plus_terms`);
    const model = await app.services.models.create(
      caller,
      {
        name: 'bench embeddings',
        apiBase: 'OPENAI',
        url: standIn.openaiBaseUrl,
        baseModel: 'bench-embed',
        kind: 'embedding',
        embeddingDimensions: DIMS,
      } as unknown as Parameters<App['services']['models']['create']>[1],
      { system: false },
    );
    const vectorSeconds = await seedVectors(app, caller.teamId, plusId, model.id);
    // the full-text ranking from the in-memory lexical index where it is on (the embedded
    // database), built before any question as a server has it after an entry's first search
    const indexes = app.services.plus.lexicalIndexes;
    if (indexes) {
      const version = (
        (await db.execute(sql`select lexical_version as v from plus_entries where team_id = ${caller.teamId}::uuid and id = ${plusId}::uuid`)) as unknown as {
          rows: Array<{ v: number | string }>;
        }
      ).rows[0]!.v;
      indexes.current(caller.teamId, plusId, Number(version));
      await indexes.idle();
      notes.push(`${label}: full-text ranking from the in-memory lexical index (LEXICAL_INDEX=auto), built before the questions.`);
    }
    const vectorOps = await app.database.vectorOps();
    notes.push(
      `${label}: ${(100_000).toLocaleString('en')} chunks seeded in ${seeded.seconds.toFixed(1)} s, their ${DIMS}-dimension vectors in ${vectorSeconds.toFixed(1)} s; pgvector ${vectorOps ? 'present (vector search uses its <=> operator)' : 'absent (vector search uses the real[] fallback)'}.`,
    );

    // failures to embed a question make that turn full-text only (logged); here they are collected and reported
    const errors: unknown[] = [];
    (app.services.embeddings as unknown as { onError: (err: unknown) => void }).onError = (err) => errors.push(err);
    const ask = (q: string) => app.services.plus.contextForPrompt(caller, plusId, q);
    const timed = async (qs: string[], budgetMs: number, f: (q: string) => Promise<unknown>) => {
      for (const q of qs.slice(0, WARMUP)) await f(q);
      const out: number[] = [];
      const end = now() + budgetMs;
      for (const q of qs) {
        if (out.length >= MIN_SAMPLES && now() > end) break;
        const t = now();
        await f(q);
        out.push(now() - t);
      }
      return out;
    };
    // Two rounds of each mode, alternating, so drift (caches, the machine) hits both alike.
    const half = Math.ceil(questions.length / 2);
    const rounds = [questions.slice(0, half), questions.slice(half)];
    const fullText: number[] = [];
    const hybrid: number[] = [];
    let hybridFailed = 0;
    let hybridAsked = 0;
    const teamModel = (on: boolean) =>
      on
        ? db.execute(
            sql`insert into team_embedding_models (team_id, model_scope, model_id) values (${caller.teamId}::uuid, ${caller.teamId}::uuid, ${model.id}::uuid) on conflict (team_id) do nothing`,
          )
        : db.execute(sql`delete from team_embedding_models where team_id = ${caller.teamId}::uuid`);
    for (const qs of rounds) {
      await teamModel(false);
      await sleep(CACHE_WAIT_MS);
      fullText.push(...(await timed(qs, LOOP_BUDGET_MS / 2, ask)));
      await teamModel(true);
      await sleep(CACHE_WAIT_MS);
      const failedBefore = errors.length;
      const n = hybrid.length;
      hybrid.push(...(await timed(qs, LOOP_BUDGET_MS / 2, ask)));
      hybridFailed += errors.length - failedBefore;
      hybridAsked += hybrid.length - n + WARMUP;
    }
    // the vector search alone, both SQL forms (the question vector from the stand-in once per question)
    if (hybridFailed > 0)
      notes.push(
        `${label}: ${hybridFailed} of ${hybridAsked} hybrid questions could not be embedded and ran full-text only (first error: ${String((errors[0] as Error)?.message ?? errors[0])}).`,
      );
    const qv = async (q: string) => {
      for (let i = 0; i < 3; i++) {
        const v = await app.services.embeddings.queryVector(caller.teamId, q);
        if (v) return v;
      }
      throw new Error(`the question could not be embedded: ${String((errors.at(-1) as Error)?.message ?? errors.at(-1))}`);
    };
    const scope = { teamId: caller.teamId, plusIds: [plusId], fileIds: [] };
    const sqlTimes: Record<string, number[]> = {};
    for (const ops of vectorOps ? [true, false] : [false]) {
      // one warm-up query, outside the budget (the budget used to include WARMUP of them, and
      // a slow path's row came out empty)
      await vectorSearch(db, scope, await qv(questions[0]!), CANDIDATES, ops);
      const out: number[] = [];
      const end = now() + (ops ? LOOP_BUDGET_MS / 2 : FALLBACK_BUDGET_MS);
      for (const q of questions.slice(1)) {
        if (out.length >= MIN_SAMPLES && now() > end) break;
        const v = await qv(q);
        const t = now();
        await vectorSearch(db, scope, v, CANDIDATES, ops);
        out.push(now() - t);
      }
      sqlTimes[ops ? 'pgvector' : 'real[]'] = out;
    }
    const ft = summarize(fullText);
    const hy = summarize(hybrid);
    const rows: Row[] = [
      {
        backend: label,
        path: 'context-for-prompt, full-text only (no embedding model)',
        n: ft.n,
        'p50 ms': round(ft.p50),
        'p99 ms': round(ft.p99),
        'vs full-text (p50)': 1,
      },
      {
        backend: label,
        path: `context-for-prompt, hybrid (${vectorOps ? 'pgvector' : 'real[] fallback'})`,
        n: hy.n,
        'p50 ms': round(hy.p50),
        'p99 ms': round(hy.p99),
        'vs full-text (p50)': round(hy.p50 / ft.p50, 2),
      },
    ];
    for (const [key, times] of Object.entries(sqlTimes)) {
      const s = summarize(times);
      rows.push({
        backend: label,
        path: `vector search SQL alone, ${key} (exact, ${DIMS} dims)`,
        n: s.n,
        'p50 ms': round(s.p50),
        'p99 ms': round(s.p99),
        'vs full-text (p50)': round(s.p50 / ft.p50, 2),
      });
    }
    return { rows, notes, targets: [] };
  } finally {
    await standIn.close();
    await atrium.close();
  }
}

export async function benchRetrievalHybrid(): Promise<Section> {
  const sw = stopwatch();
  const sentences = loadSentences();
  const questions = makeQuestions(sentences, QUESTIONS);
  const rows: Row[] = [];
  const notes: string[] = [];
  const pglite = await onBackend('PGlite', null, sentences, questions);
  rows.push(...pglite.rows);
  notes.push(...pglite.notes);
  // each backend's figures as soon as they exist (the whole benchmark takes long on a loaded machine)
  process.stderr.write(`${JSON.stringify({ rows: pglite.rows, notes: pglite.notes })}\n`);
  const pg = process.env.ATRIUM_BENCH_HYBRID_PG === 'off' ? { error: 'ATRIUM_BENCH_HYBRID_PG=off' } : await createThrowawayDb('hybrid');
  if (isDb(pg)) {
    try {
      const r = await onBackend('PostgreSQL', pg.url, sentences, questions);
      rows.push(...r.rows);
      notes.push(...r.notes);
    } finally {
      await pg.drop();
    }
  } else notes.push(`PostgreSQL skipped: ${pg.error}`);
  return {
    name: 'Hybrid retrieval',
    method: `POST context-for-prompt's service path over one entry of 100k chunks, each with a ${DIMS}-dimension unit vector, full-text only against hybrid (full-text top 50 and vector top 50 fused by reciprocal rank, k = 60), alternating in two rounds of the same ${QUESTIONS} questions; then the vector search's SQL alone, exact, with pgvector's <=> operator (when present) and with the real[] dot product in plain SQL. The question's vector comes from the stand-in provider over loopback HTTP.`,
    tables: [{ rows }],
    notes,
    seconds: sw.elapsedMs() / 1000,
  };
}
