/**
 * Conversation search: `GET /api/v1/chat/search` latency over one team's 1,000 threads × 50
 * messages (sentences of real text, drawn at random), on the embedded database and on
 * PostgreSQL. In process (`buildApp`, requests through `inject`, one at a time), so the figures
 * are the server's own work — auth, the query, snippets — without a network.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { buildApp, type App } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { ADMIN_KEY } from '../test/helpers/app.js';
import { loadSentences, prng } from './lib/corpus.js';
import { createThrowawayDb, isDb } from './lib/pg.js';
import { renderSection, type Row, type Section, type TargetRow } from './lib/report.js';
import { round, summarize } from './lib/stats.js';
import { now, since, stopwatch } from './lib/timer.js';

const THREADS = 1_000;
const MESSAGES = 50;
const RUNS = 40;
const WARMUP = 5;
const TARGET_MS = 100;
const INSERT_BATCH = 2_000;

interface Seeded {
  key: string;
  /** queries chosen from the seeded text by how many messages hold them */
  queries: Array<{ label: string; q: string }>;
}

export async function seed(app: App): Promise<Seeded> {
  const post = (url: string, payload: object, key: string) => app.app.inject({ method: 'POST', url, payload, headers: { authorization: `Bearer ${key}` } });
  const team = (
    await post('/api/v1/teams', { name: `bench-${randomUUID().slice(0, 8)}`, ownerName: 'O', ownerEmail: `o-${randomUUID()}@example.com` }, ADMIN_KEY)
  ).json();
  const key = team.apiKey as string;
  const ws = (await post('/api/v1/workspaces', { name: 'bench' }, key)).json();
  const db = app.database.db;
  const rand = prng(20_261_127);
  const sentences = loadSentences();
  const pick = () => sentences[Math.floor(rand() * sentences.length)]!;
  const df = new Map<string, number>();
  const threads = Array.from({ length: THREADS }, (_, i) => ({ id: randomUUID(), title: pick().slice(0, 80), i }));
  await db.execute(sql`
    insert into chat_threads (id, team_id, workspace_id, user_id, title, created, updated)
    select r.id, ${team.team.id}::uuid, ${ws.id}::uuid, ${team.owner.id}::int, r.title, now() - make_interval(mins => r.i), now() - make_interval(mins => r.i)
    from json_to_recordset(${JSON.stringify(threads)}::json) as r(id uuid, title text, i int)`);
  let batch: Array<{ id: string; thread_id: string; role: string; content: string }> = [];
  const flush = async () => {
    if (batch.length === 0) return;
    await db.execute(sql`
      insert into chat_messages (id, thread_id, role, content)
      select r.id, r.thread_id, r.role, r.content from json_to_recordset(${JSON.stringify(batch)}::json) as r(id uuid, thread_id uuid, role text, content text)`);
    batch = [];
  };
  for (const t of threads) {
    for (let m = 0; m < MESSAGES; m++) {
      const n = m % 2 === 0 ? 1 + Math.floor(rand() * 2) : 3 + Math.floor(rand() * 6);
      const content = Array.from({ length: n }, pick).join(' ');
      // whole words of letters only (not parts of paths, URLs or contractions, which the parser reads otherwise)
      for (const w of new Set(
        content
          .split(/\s+/)
          .filter((x) => /^[a-z]{6,}[,.;:]?$/.test(x))
          .map((x) => x.replace(/[,.;:]$/, '')),
      ))
        df.set(w, (df.get(w) ?? 0) + 1);
      batch.push({ id: randomUUID(), thread_id: t.id, role: m % 2 === 0 ? 'user' : 'assistant', content });
      if (batch.length >= INSERT_BATCH) await flush();
    }
  }
  await flush();
  await db.execute(sql`analyze chat_messages`);
  await db.execute(sql`analyze chat_threads`);
  const nearest = (target: number) => [...df.entries()].sort((a, b) => Math.abs(a[1] - target) - Math.abs(b[1] - target) || (a[0] < b[0] ? -1 : 1))[0]!;
  const rare = nearest(20);
  const mid = nearest(500);
  const common = nearest(5_000);
  return {
    key,
    queries: [
      { label: `rare word (${rare[1]} messages)`, q: `${rare[0]} ` },
      { label: `common word (${common[1]} messages)`, q: `${common[0]} ` },
      { label: 'two words', q: `${mid[0]} ${common[0]} ` },
      { label: `prefix while typing (${mid[0].slice(0, 4)}…)`, q: mid[0].slice(0, 4) },
    ],
  };
}

async function measure(databaseUrl: string, label: string): Promise<{ rows: Row[]; worstP50: number }> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'atrium-bench-'));
  const config = { ...loadConfig({ DATA_DIR: dataDir, ADMIN_API_KEY: ADMIN_KEY, SECRET_KEY: 'test-secret-key-0123456789', LOG_LEVEL: 'silent' }), databaseUrl };
  const app = await buildApp(config, { logger: false });
  try {
    const seeded = await seed(app);
    const rows: Row[] = [];
    let worstP50 = 0;
    for (const { label: what, q } of seeded.queries) {
      const ms: number[] = [];
      let total = 0;
      for (let i = 0; i < WARMUP + RUNS; i++) {
        const t0 = now();
        const res = await app.app.inject({
          method: 'GET',
          url: '/api/v1/chat/search',
          query: { q, size: '20' },
          headers: { authorization: `Bearer ${seeded.key}` },
        });
        if (i >= WARMUP) ms.push(since(t0));
        if (res.statusCode !== 200) throw new Error(`search: ${res.statusCode} ${res.body}`);
        total = res.json().totalElements as number;
      }
      const s = summarize(ms);
      worstP50 = Math.max(worstP50, s.p50);
      rows.push({ database: label, query: what, 'threads found': total, n: s.n, 'p50 ms': round(s.p50, 1), 'p90 ms': round(s.p90, 1) });
    }
    return { rows, worstP50 };
  } finally {
    await app.app.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export async function benchChatSearch(): Promise<Section> {
  const sw = stopwatch();
  const rows: Row[] = [];
  const targets: TargetRow[] = [];
  const notes: string[] = [];
  const target = (db: string, p50: number) =>
    targets.push({
      benchmark: `Conversation search, ${db}`,
      target: `p50 < ${TARGET_MS} ms at ${THREADS} threads × ${MESSAGES} messages`,
      measured: `${round(p50, 1)} ms (slowest query's p50)`,
      result: p50 < TARGET_MS ? 'pass' : 'MISS',
    });
  const embedded = await measure('memory://', 'PGlite');
  rows.push(...embedded.rows);
  target('PGlite', embedded.worstP50);
  const pg = await createThrowawayDb('chat_search');
  if (isDb(pg)) {
    try {
      const r = await measure(pg.url, 'PostgreSQL');
      rows.push(...r.rows);
      target('PostgreSQL', r.worstP50);
    } finally {
      await pg.drop();
    }
  } else notes.push(`PostgreSQL not measured: ${pg.error}`);
  return {
    name: 'Conversation search',
    method: `In process: buildApp, one team with ${THREADS} threads × ${MESSAGES} messages (1–2 sentences a question, 3–8 an answer, of real text drawn at random; titles a sentence's first 80 characters), all visible to the caller; \`GET /api/v1/chat/search\` (page size 20) through inject, one at a time, ${RUNS} runs after ${WARMUP} warm-up runs per query. Queries are words of the seeded text chosen by how many messages hold them; a query ending in a space is whole words, one without matches its last word as a prefix.`,
    tables: [{ rows }],
    notes,
    targets,
    seconds: sw.elapsedMs() / 1000,
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.stdout.write(`${renderSection(await benchChatSearch())}\n`);
}
