/**
 * Retrieval statistics (plus_terms.df, plus_entries.chunk_count) kept by PlusRepo in the
 * transactions that write chunks, and retrieval over them — on PGlite, or on PostgreSQL when
 * ATRIUM_TEST_DATABASE_URL is set.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PlusRepo, type NewFile } from '../../src/modules/plus/repo.js';
import { storeFiles } from '../../src/modules/plus/store.js';
import { TERM_OPTIONS } from '../../src/retrieval/query.js';
import { RetrievalRepo } from '../../src/retrieval/repo.js';
import { newTeam, startTestApp, type TeamFixture, type TestApp } from '../helpers/app.js';
import { expectStatus, multipartBody } from '../helpers/api.js';
import type { Part } from '../helpers/multipart.js';

const FIXTURES = path.join(import.meta.dirname, '..', 'fixtures');
const MIGRATION = path.join(import.meta.dirname, '..', '..', 'src', 'db', 'migrations', '0001_plus_terms.sql');
const file = (name: string, contentType: string): Part => ({ name: 'files', filename: name, contentType, data: readFileSync(path.join(FIXTURES, name)) });

let t: TestApp;
let team: TeamFixture;
beforeAll(async () => {
  t = await startTestApp();
  team = await newTeam(t);
});
afterAll(async () => {
  await t.close();
});

type Rows<T> = { rows: T[] };
const db = () => t.database.db;

/** plus_terms of an entry, as a lexeme → df map. */
async function storedTerms(plusId: string): Promise<Map<string, number>> {
  const r = (await db().execute(sql`select lexeme, df from plus_terms where plus_id = ${plusId}::uuid`)) as unknown as Rows<{ lexeme: string; df: number }>;
  return new Map(r.rows.map((x) => [x.lexeme, Number(x.df)]));
}

/** What plus_terms should hold: for every lexeme of the entry's chunks, how many of them contain it. */
async function recountedTerms(plusId: string): Promise<Map<string, number>> {
  const r = (await db().execute(sql`
    select l.lexeme, count(*)::int as df
    from plus_chunks c, unnest(tsvector_to_array(c.search)) as l(lexeme)
    where c.plus_id = ${plusId}::uuid
    group by l.lexeme`)) as unknown as Rows<{ lexeme: string; df: number }>;
  return new Map(r.rows.map((x) => [x.lexeme, Number(x.df)]));
}

async function chunkCounts(plusId: string): Promise<{ stored: number; actual: number }> {
  const r = (await db().execute(sql`
    select (select chunk_count from plus_entries where id = ${plusId}::uuid) as stored,
           (select count(*)::int from plus_chunks where plus_id = ${plusId}::uuid) as actual`)) as unknown as Rows<{ stored: number; actual: number }>;
  return { stored: Number(r.rows[0]!.stored), actual: Number(r.rows[0]!.actual) };
}

async function expectConsistent(plusId: string): Promise<Map<string, number>> {
  const stored = await storedTerms(plusId);
  expect(stored).toEqual(await recountedTerms(plusId));
  const counts = await chunkCounts(plusId);
  expect(counts.stored).toBe(counts.actual);
  return stored;
}

const api = () => t.api(team.ownerKey);
const plusAt = (plusId: string) => ({ params: { path: { plusId } } });
const createPlus = async (parts: Part[]) => expectStatus(await api().POST('/api/v1/plus', multipartBody(parts)), 200);
const addFiles = (plusId: string, parts: Part[]) => api().POST('/api/v1/plus/{plusId}/add-file', { ...plusAt(plusId), ...multipartBody(parts) });

describe('term statistics are kept with the chunks', () => {
  it('after an upload, another file, a file deleted and the entry deleted', async () => {
    const entry = await createPlus([{ name: 'title', value: 'licences' }, file('gpl-3.txt', 'text/plain')]);
    const afterOne = await expectConsistent(entry.id);
    expect(afterOne.size).toBeGreaterThan(500);
    expect((await chunkCounts(entry.id)).stored).toBe(entry.files[0]!.fileChunks.length);

    const added = expectStatus(await addFiles(entry.id, [file('mammoth-readme.md', 'text/markdown')]), 200);
    const both = await expectConsistent(entry.id);
    expect(both.get('mammoth')).toBeGreaterThan(0);
    // a lexeme of both documents counts the chunks of both
    expect([...afterOne].filter(([l, df]) => both.get(l)! > df).length).toBeGreaterThan(10);

    const mammoth = added.files.find((f) => f.filename === 'mammoth-readme.md')!;
    expectStatus(await api().DELETE('/api/v1/plus/file/{fileId}', { params: { path: { fileId: mammoth.id } } }), 200);
    const afterDelete = await expectConsistent(entry.id);
    // back to the first file's statistics: the lexemes only the deleted file had are gone
    expect(afterDelete).toEqual(afterOne);
    expect(afterDelete.has('mammoth')).toBe(false);

    expectStatus(await api().DELETE('/api/v1/plus/{plusId}', plusAt(entry.id)), 200);
    expect((await storedTerms(entry.id)).size).toBe(0);
  });

  it('files added from a chat count too, and a failed upload changes nothing', async () => {
    const entry = await createPlus([{ name: 'title', value: 'chat files' }]);
    expect((await chunkCounts(entry.id)).stored).toBe(0);
    expectStatus(
      await api().POST('/api/v1/chat/{plusId}/add-file', { ...plusAt(entry.id), ...multipartBody([file('users-and-groups.html', 'text/html')]) }),
      200,
    );
    const before = await expectConsistent(entry.id);
    expect(before.size).toBeGreaterThan(0);
    const bad = await addFiles(entry.id, [file('gpl-3.txt', 'text/plain'), file('truncated.pdf', 'application/pdf')]);
    expect(bad.response.status).toBe(400);
    expect(await expectConsistent(entry.id)).toEqual(before);
  });

  it('the migration backfill computes the same statistics for existing chunks', async () => {
    const entry = await createPlus([{ name: 'title', value: 'backfill' }, file('gpl-3.txt', 'text/plain'), file('mammoth-readme.md', 'text/markdown')]);
    const maintained = await expectConsistent(entry.id);
    const statements = readFileSync(MIGRATION, 'utf8').split('--> statement-breakpoint');
    const backfill = statements.filter((s) => /^\s*(--.*\n)*\s*(INSERT INTO "plus_terms"|UPDATE "plus_entries")/.test(s));
    expect(backfill).toHaveLength(2);
    // As before the migration — no statistics at all — then the backfill, in a transaction rolled
    // back afterwards (on a shared PostgreSQL other test files' entries are in these tables too).
    let seen: { terms: Map<string, number>; count: number } | undefined;
    await db()
      .transaction(async (tx) => {
        await tx.execute(sql`delete from plus_terms`);
        await tx.execute(sql`update plus_entries set chunk_count = 0`);
        // plus_terms carries the entry's team since ids are per team (migration 0029 filled it in
        // from the entries): the backfill's statistics, computed as it does, with that column too
        const withTeam = (s: string) =>
          s
            .replace('INSERT INTO "plus_terms" ("plus_id", "lexeme", "df")', 'INSERT INTO "plus_terms" ("team_id", "plus_id", "lexeme", "df")')
            .replace('SELECT c."plus_id", l."lexeme"', 'SELECT c."team_id", c."plus_id", l."lexeme"')
            .replace('GROUP BY c."plus_id", l."lexeme"', 'GROUP BY c."team_id", c."plus_id", l."lexeme"');
        for (const s of backfill) await tx.execute(sql.raw(withTeam(s)));
        const r = (await tx.execute(sql`select lexeme, df from plus_terms where plus_id = ${entry.id}::uuid`)) as unknown as Rows<{
          lexeme: string;
          df: number;
        }>;
        const c = (await tx.execute(sql`select chunk_count from plus_entries where id = ${entry.id}::uuid`)) as unknown as Rows<{ chunk_count: number }>;
        seen = { terms: new Map(r.rows.map((x) => [x.lexeme, Number(x.df)])), count: Number(c.rows[0]!.chunk_count) };
        tx.rollback();
      })
      .catch((err: unknown) => {
        if (!(err instanceof Error) || !/rollback/i.test(err.constructor.name + err.message)) throw err;
      });
    expect(seen!.terms).toEqual(maintained);
    expect(seen!.count).toBe((await chunkCounts(entry.id)).actual);
    await expectConsistent(entry.id);
  });
});

describe('retrieval', () => {
  const repo = new PlusRepo();

  /** An entry whose one file has exactly these chunk texts, written by PlusRepo as uploads are. */
  async function entryWithChunks(texts: string[]): Promise<{ plusId: string; fileId: string; chunkIds: number[] }> {
    const plusId = randomUUID();
    const fileId = randomUUID();
    await repo.insert(db(), { id: plusId, teamId: team.teamId, userId: team.ownerId, title: 'synthetic' });
    const f: NewFile = {
      id: fileId,
      teamId: team.teamId,
      plusId,
      userId: team.ownerId,
      threadId: null,
      filename: 'synthetic.txt',
      mimeType: 'text/plain',
      content: Buffer.from(texts.join('\n\n')),
      tokenSize: texts.length,
      summary: null,
      created: new Date(),
      chunks: texts.map((text, idx) => ({ idx, fileData: text, fileDataProcessed: text, tokenSize: 1 })),
    };
    await storeFiles(db(), [f], { first: async () => {}, last: async () => {} });
    const ids = (await db().execute(sql`select id from plus_chunks where file_id = ${fileId}::uuid order by idx`)) as unknown as Rows<{ id: number | string }>;
    return { plusId, fileId, chunkIds: ids.rows.map((r) => Number(r.id)) };
  }

  it('widens step by step, ranks within a step by idf, never returns a chunk twice', async () => {
    const e = await entryWithChunks(['alpha beta gamma', 'alpha beta', 'alpha delta', 'beta delta', 'gamma', 'unrelated words here']);
    const [c1, c2, c3, c4] = e.chunkIds;
    await expectConsistent(e.plusId);
    // no lexeme alone is rare enough (budget 1), none is very common: pairs of them only
    const retrieval = new RetrievalRepo({ ...TERM_OPTIONS, budget: 1, commonShare: 1, commonFloor: 0 });
    const scope = { teamId: team.teamId, plusIds: [e.plusId], fileIds: [] };
    const all = await retrieval.search(db(), { scope, question: { text: 'Alpha, beta, gamma and delta?' } }, 50);
    expect(all.choice!.steps.map((s) => s.kind)).toEqual(['rare or rarest pair', 'any pair', 'any pair', 'rarest']);
    expect(all.leading).toBe(false);
    expect(all.steps).toBe(4);
    const ids = all.chunks.map((c) => c.chunkId);
    expect(new Set(ids).size).toBe(ids.length);
    // delta & gamma: none; any two of delta, gamma, alpha: c1 (alpha, gamma — and beta) before c3 (alpha, delta)
    expect(ids.slice(0, 2)).toEqual([c1, c3]);
    // any two of the four: c2 and c4; delta alone adds nothing new; "gamma" alone and the unrelated chunk never
    expect(new Set(ids.slice(2))).toEqual(new Set([c2, c4]));
    expect(all.chunks.every((c) => c.filename === 'synthetic.txt' && c.plusId === e.plusId && c.fileId === e.fileId)).toBe(true);
    // enough after the second step: the later ones do not run
    const two = await retrieval.search(db(), { scope, question: { text: 'Alpha, beta, gamma and delta?' } }, 2);
    expect(two.steps).toBe(2);
    expect(two.chunks.map((c) => c.chunkId)).toEqual([c1, c3]);
  });

  it('falls back to the opening chunks when no word of the question is in scope', async () => {
    const e = await entryWithChunks(['first chunk text', 'second chunk text']);
    const r = await new RetrievalRepo().search(
      db(),
      { scope: { teamId: team.teamId, plusIds: [e.plusId], fileIds: [] }, question: { text: 'What about the xylophone?' } },
      50,
    );
    expect(r.choice).toBeNull();
    expect(r.leading).toBe(true);
    expect(r.chunks.map((c) => c.chunkId)).toEqual(e.chunkIds);
  });

  it("a scope of files (a thread's) uses their entries' statistics and searches only those files", async () => {
    const e = await entryWithChunks(['shared zebra words', 'zebra again', 'other']);
    const other = await entryWithChunks(['zebra elsewhere']);
    const retrieval = new RetrievalRepo();
    const stats = await retrieval.termStats(db(), { teamId: team.teamId, plusIds: [], fileIds: [e.fileId] }, { text: 'zebra?' });
    expect(stats).toEqual({ n: 3, tokens: 3, files: 1, terms: [{ lexeme: 'zebra', df: 2, pos: 1 }] });
    const both = await retrieval.termStats(db(), { teamId: team.teamId, plusIds: [other.plusId], fileIds: [e.fileId] }, { text: 'zebra?' });
    expect(both).toEqual({ n: 4, tokens: 4, files: 2, terms: [{ lexeme: 'zebra', df: 3, pos: 1 }] });
    const r = await retrieval.search(db(), { scope: { teamId: team.teamId, plusIds: [], fileIds: [e.fileId] }, question: { text: 'zebra?' } }, 50);
    expect(r.chunks.map((c) => c.chunkId).sort()).toEqual(e.chunkIds.slice(0, 2).sort());
  });

  it('lexemes with quotes and backslashes reach the index as they are', async () => {
    for (const lexeme of ["o'reilly", 'a\\b', "it''s", 'x:y & z|!']) {
      const { quoteLexeme } = await import('../../src/retrieval/query.js');
      const r = (await db().execute(
        sql`select array_to_string(tsvector_to_array(array_to_tsvector(array[${lexeme}::text])), '') as back, (cast(${quoteLexeme(lexeme)} as tsquery))::text as q`,
      )) as unknown as Rows<{
        back: string;
        q: string;
      }>;
      expect(r.rows[0]!.back).toBe(lexeme);
      // the tsquery holds exactly that one lexeme, and matches a vector of it
      const m = (await db().execute(
        sql`select array_to_tsvector(array[${lexeme}::text]) @@ cast(${quoteLexeme(lexeme)} as tsquery) as ok`,
      )) as unknown as Rows<{ ok: boolean }>;
      expect(m.rows[0]!.ok).toBe(true);
    }
  });
});
