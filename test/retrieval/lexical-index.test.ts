/**
 * The in-memory lexical index (src/retrieval/lexical-index/): the same candidates and features
 * as SQL (hence, scored by the one scorer, the same ranking) on real documents for many
 * generated questions (one entry and several), the tsvector text it reads,
 * PostgreSQL's rounding of tied scores, the lexical_version that keeps it from answering from
 * stale chunks (uploads, deletes, hand-written SQL), its size limit, and the service's use of it
 * over HTTP — on PGlite, or on PostgreSQL when ATRIUM_TEST_DATABASE_URL is set.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IndexBuilder } from '../../src/retrieval/lexical-index/builder.js';
import { EntryIndex } from '../../src/retrieval/lexical-index/entry-index.js';
import { buildEntryIndex, LexicalIndexes } from '../../src/retrieval/lexical-index/indexes.js';
import { tieKey } from '../../src/retrieval/score.js';
import { lexemesOfVector } from '../../src/retrieval/lexical-index/question-lexemes.js';
import { RetrievalRepo } from '../../src/retrieval/repo.js';
import type { TermChoice } from '../../src/retrieval/query.js';
import { PHRASE, type Features } from '../../src/retrieval/score.js';
import { featuresOf, featuresSql, type ChunkScope, type FeatureRow, type Question } from '../../src/retrieval/search-sql.js';
import { newTeam, startTestApp, type TeamFixture, type TestApp } from '../helpers/app.js';
import { expectStatus, multipartBody } from '../helpers/api.js';
import type { Part } from '../helpers/multipart.js';

const FIXTURES = path.join(import.meta.dirname, '..', 'fixtures');
const file = (name: string): Part => ({
  name: 'files',
  filename: name,
  contentType: 'application/octet-stream',
  data: readFileSync(path.join(FIXTURES, name)),
});
const textFile = (filename: string, text: string): Part => ({ name: 'files', filename, contentType: 'text/plain', data: Buffer.from(text) });

let t: TestApp;
let team: TeamFixture;
beforeAll(async () => {
  // LEXICAL_INDEX on whatever the database (auto would leave it off on PostgreSQL)
  t = await startTestApp({ lexicalIndex: { mode: 'on', maxChunks: 1_000_000 } });
  team = await newTeam(t);
});
afterAll(async () => {
  await t.close();
});

const db = () => t.database.db;
const retrieval = new RetrievalRepo();

async function createPlus(files: Part[], title = 'docs') {
  return expectStatus(await t.api(team.ownerKey).POST('/api/v1/plus', multipartBody([{ name: 'title', value: title }, ...files])), 200);
}

const addFiles = (plusId: string, files: Part[]) =>
  t.api(team.ownerKey).POST('/api/v1/plus/{plusId}/add-file', { params: { path: { plusId } }, ...multipartBody(files) });
const deleteFile = (fileId: string) => t.api(team.ownerKey).DELETE('/api/v1/plus/file/{fileId}', { params: { path: { fileId } } });

async function indexOf(plusId: string): Promise<EntryIndex> {
  const built = await buildEntryIndex(db(), team.teamId, plusId, 1_000_000);
  if (!(built instanceof EntryIndex)) throw new Error('not indexed');
  return built;
}

/** A small deterministic generator (the questions are the same in every run). */
function random(seed: number) {
  let x = seed;
  return () => {
    x = (x * 1_103_515_245 + 12_345) % 2 ** 31;
    return x / 2 ** 31;
  };
}

/**
 * Questions built from the documents' own words: runs of consecutive words (phrases, so the
 * phrase and proximity boosts apply, in both orders), words from far apart, stop words, misspelt
 * long words (the prefix match), and follow-ups carrying an earlier question.
 */
function questions(text: string, count: number, seed: number): Question[] {
  const words = text.split(/[^A-Za-z]+/).filter((w) => w.length > 0);
  const next = random(seed);
  const pick = () => Math.floor(next() * words.length);
  const out: Question[] = [];
  for (let i = 0; i < count; i++) {
    const at = pick();
    const run = words.slice(at, at + 1 + Math.floor(next() * 6));
    const kind = i % 5;
    if (kind === 1) run.reverse(); // near, the other way round
    if (kind === 2) run.push(words[pick()]!, words[pick()]!);
    if (kind === 3) run.push(`${(words.find((w, j) => j > at && w.length >= 7) ?? 'licence').slice(0, -1)}e`); // a long word spelt otherwise
    const textOf = `What about ${run.join(' ')}?`;
    out.push(kind === 4 && out.length > 0 ? { text: textOf, carry: out[out.length - 1]!.text } : { text: textOf });
  }
  return out;
}

const byChunk = (a: Features, b: Features) => a.chunkId - b.chunkId;

/** Every step's candidates with their features, as the SQL reads them (featuresSql) and as the indexes do. */
async function expectSameFeatures(scope: ChunkScope, indexes: EntryIndex[], choice: TermChoice) {
  for (const step of choice.steps) {
    const res = (await db().execute(featuresSql(scope, choice, step, true))) as unknown as { rows: FeatureRow[] };
    const bySql = res.rows.map((r) => featuresOf(r, choice.rank.length, choice.pairs.length)).sort(byChunk);
    const inMemory: Features[] = [];
    for (const index of indexes) index.candidates(choice, step, (f) => inMemory.push({ ...f, tf: [...f.tf], pairs: [...f.pairs] }));
    expect({ step: step.match, features: inMemory.sort(byChunk) }).toEqual({ step: step.match, features: bySql });
  }
}

/**
 * Both storages: the same term statistics and choice, every step's candidates with the same
 * features (what the one scorer, score.ts, ranks), hence the same ranking.
 */
async function expectSameRanking(plusIds: string[], indexes: EntryIndex[], q: Question, limit = 50) {
  const scope = { teamId: team.teamId, plusIds, fileIds: [] };
  const bySql = await retrieval.search(db(), { scope, question: q }, limit);
  if (bySql.choice) await expectSameFeatures(scope, indexes, bySql.choice);
  const inMemory = await retrieval.search(db(), { teamId: team.teamId, indexes, n: bySql.stats.n, question: q }, limit);
  const row = (c: { chunkId: number; score: number; rank: number; fileId: string; plusId: string; tokenSize: number }) => [
    c.chunkId,
    c.score,
    c.rank,
    c.fileId,
    c.plusId,
    c.tokenSize,
  ];
  expect({ q, chunks: inMemory.chunks.map(row) }).toEqual({ q, chunks: bySql.chunks.map(row) });
  expect({ q, choice: inMemory.choice, steps: inMemory.steps }).toEqual({ q, choice: bySql.choice, steps: bySql.steps });
  return bySql;
}

describe('the same candidates and features as SQL', () => {
  it('over real documents of several formats, for generated questions (phrases both ways, prefix matches, follow-ups)', async () => {
    const docs = ['gpl-3.txt', 'mammoth-readme.md', 'users-and-groups.html', 'shared-mime-info-spec.pdf', 'apache-license.docx'];
    const e = await createPlus(docs.map(file));
    const index = await indexOf(e.id);
    const text = readFileSync(path.join(FIXTURES, 'gpl-3.txt'), 'utf8') + readFileSync(path.join(FIXTURES, 'mammoth-readme.md'), 'utf8');
    let found = 0;
    for (const q of questions(text, 150, 7)) {
      const r = await expectSameRanking([e.id], [index], q);
      if (!r.leading && r.chunks.length > 0) found++;
    }
    // the questions do find chunks (a comparison of empty lists would prove nothing)
    expect(found).toBeGreaterThan(120);
  });

  it('over several entries searched together (df, N and average length summed over them), and a limit', async () => {
    const a = await createPlus([file('gpl-3.txt')], 'a');
    const b = await createPlus([file('mammoth-readme.md'), file('users-and-groups.html')], 'b');
    const indexes = [await indexOf(a.id), await indexOf(b.id)];
    const text = readFileSync(path.join(FIXTURES, 'gpl-3.txt'), 'utf8').slice(0, 20_000) + readFileSync(path.join(FIXTURES, 'mammoth-readme.md'), 'utf8');
    for (const q of questions(text, 60, 11)) await expectSameRanking([a.id, b.id], indexes, q, 7);
  });

  it('ties: equal scores ordered by diversity, then the shorter chunk, then the id', async () => {
    const same = 'The zebra crossing is painted white.';
    const e = await createPlus([
      textFile('one.txt', `${same}\n\nUnrelated words here.`),
      textFile('two.txt', `${same}\n\n${same}`),
      textFile('three.txt', same),
    ]);
    const r = await expectSameRanking([e.id], [await indexOf(e.id)], { text: 'zebra crossing' });
    expect(r.chunks.length).toBeGreaterThan(1);
  });

  it('features of what the scorer weighs: tf in the text only, headings, phrase and near pairs, the file', async () => {
    const e = await createPlus([
      textFile('one.md', '# Zebra crossing\n\nA zebra crossing is painted white. Crossing zebra zebra here.'),
      textFile('two.txt', 'Painted crossing lines near a white zebra.'),
    ]);
    const index = await indexOf(e.id);
    const r = await expectSameRanking([e.id], [index], { text: 'zebra crossing painted' });
    const f: Features[] = [];
    index.candidates(r.choice!, r.choice!.steps[0]!, (x) => f.push({ ...x, tf: [...x.tf], pairs: [...x.pairs] }));
    // some chunk holds a ranking lexeme in its headings, one the pair as a phrase
    expect(f.some((x) => x.headings !== 0)).toBe(true);
    expect(f.some((x) => x.pairs.includes(PHRASE))).toBe(true);
    expect(f.every((x) => x.fileTokens > 0 && x.tf.length === r.choice!.rank.length)).toBe(true);
  });

  it('rounds scores as PostgreSQL does before comparing them (float8 → numeric at 15 digits, half away from zero)', async () => {
    const next = random(3);
    const values = [0, 1, 0.5, 12.3456789045, 12.3456789055, 2.0000000005, 1e-7, 1.23456789012345e-7, 0.0000000005, 33.333333333333336];
    for (let i = 0; i < 300; i++) values.push(next() * 40, Math.round(next() * 4e10) / 4e9, next() * 1e-6);
    const res = (await db().execute(
      sql`select round(v::numeric, 9)::text as r from unnest(cast(${`{${values.map((v) => v.toString()).join(',')}}`} as float8[])) with ordinality u(v, i) order by i`,
    )) as unknown as { rows: Array<{ r: string }> };
    const fromPg = res.rows.map((r) => Number(r.r.replace('.', '')));
    expect(values.map(tieKey)).toEqual(fromPg);
  });
});

describe('what it reads', () => {
  it("parses PostgreSQL's tsvector text: quoted and escaped lexemes, positions and weights", async () => {
    const res = (await db().execute(sql`select cast(${"'it''s':1,4A 'back\\\\slash':2 'plain':3B,5,6A"} as tsvector)::text as v`)) as unknown as {
      rows: Array<{ v: string }>;
    };
    const b = new IndexBuilder();
    b.addFile('f', 'f.txt', 0);
    expect(b.addChunk(1, 'f', 10, res.rows[0]!.v)).toBe(true);
    expect(b.addChunk(2, 'not added', 10, "'x':1")).toBe(false);
    const idx = await b.seal('p', 0, 10);
    expect(idx.df("it's")).toBe(1);
    expect(idx.df('back\\slash')).toBe(1);
    expect(idx.df('plain')).toBe(1);
    expect(idx.withPrefix('pla')).toEqual([['plain', 1]]);
    expect(idx.chunks).toBe(1);
  });

  it('keeps every row when what it adds outgrows its first blocks', async () => {
    // 1,500 chunks of 61 lexemes each: 91,500 rows and 93,000 positions, over one block of 65,536
    const b = new IndexBuilder();
    b.addFile('f', 'f.txt', 0);
    const common = Array.from({ length: 60 }, (_, k) => `'w${k}':${k + 1}`).join(' ');
    for (let i = 0; i < 1500; i++) b.addChunk(i + 1, 'f', 10, `${common} 'u${i}':61,62`);
    const idx = await b.seal('p', 0, 15_000);
    expect(idx.chunks).toBe(1500);
    expect(idx.df('w0')).toBe(1500);
    expect(idx.df('w59')).toBe(1500);
    expect([idx.df('u0'), idx.df('u1499')]).toEqual([1, 1]);
    const seen: Features[] = [];
    const choice: TermChoice = {
      rank: ['u1499', 'w58', 'w59'],
      idf: [1, 1, 1],
      carried: [false, false, false],
      pairs: [{ a: 'w58', b: 'w59', distance: 1, idf: 1 }],
      steps: [{ kind: 'any', match: "'u1499'", clauses: [['u1499']], excluded: [] }],
    };
    idx.candidates(choice, choice.steps[0]!, (f) => seen.push(f));
    // the last chunk, read from the last blocks: its lexemes, their counts and positions
    expect(seen.map((f) => [f.chunkId, f.tf, f.pairs])).toEqual([[1500, [2, 1, 1], [PHRASE]]]);
  });

  it("reads a question's lexemes and first positions from its tsvector text as the SQL does, a follow-up's carried ones after them", async () => {
    const byLexeme = (a: { lexeme: string }, b: { lexeme: string }) => (a.lexeme < b.lexeme ? -1 : 1);
    const questions = [
      "What's O'Brien's licence?",
      'Copy copies copied: the C:\\path\\file and a "quoted" word',
      'the of and',
      'Résumé naïve café 2024-01-02 v1.2.3',
    ];
    for (const q of questions) {
      const res = (await db().execute(sql`select to_tsvector('english', ${q})::text as v`)) as unknown as { rows: Array<{ v: string }> };
      // the SQL's own reading: unnest(tsvector), first position
      const rows = (await db().execute(sql`select u.lexeme, u.positions[1]::int as pos from unnest(to_tsvector('english', ${q})) u`)) as unknown as {
        rows: Array<{ lexeme: string; pos: number }>;
      };
      const expected = rows.rows.map((r) => ({ lexeme: r.lexeme, pos: r.pos, carried: false })).sort(byLexeme);
      expect(lexemesOfVector(res.rows[0]!.v).sort(byLexeme)).toEqual(expected);
      expect((await retrieval.questionLexemes(db(), { text: q })).sort(byLexeme)).toEqual(expected);
    }
    // a follow-up: the carried question's lexemes the question lacks, without a position
    const own = 'And what about the second licence?';
    const carry = "Which licences cover O'Brien's copies?";
    const merged = (await db().execute(sql`
      select lexeme, min(pos) as pos, bool_and(carried) as carried from (
        select u.lexeme, u.positions[1]::int as pos, false as carried from unnest(to_tsvector('english', ${own})) u
        union all
        select u.lexeme, null, true from unnest(to_tsvector('english', ${carry})) u
      ) q group by lexeme`)) as unknown as { rows: Array<{ lexeme: string; pos: number | null; carried: boolean }> };
    const got = await retrieval.questionLexemes(db(), { text: own, carry });
    expect(got.filter((l) => l.carried).length).toBeGreaterThan(0);
    expect(got.sort(byLexeme)).toEqual(
      merged.rows.map((r) => ({ lexeme: r.lexeme, pos: r.pos === null ? null : Number(r.pos), carried: r.carried })).sort(byLexeme),
    );
  });
});

describe('never stale', () => {
  it('every statement inserting or deleting chunks raises the entry’s lexical_version — uploads, file deletes, and SQL written by hand', async () => {
    const e = await createPlus([textFile('a.txt', 'Alpha beta gamma.')]);
    const version = async () =>
      Number(
        (
          (await db().execute(sql`select lexical_version as v from plus_entries where id = ${e.id}::uuid`)) as unknown as {
            rows: Array<{ v: number | string }>;
          }
        ).rows[0]!.v,
      );
    const v0 = await version();
    expectStatus(await addFiles(e.id, [textFile('b.txt', 'Delta epsilon.')]), 200);
    const v1 = await version();
    expect(v1).toBeGreaterThan(v0);
    expectStatus(await deleteFile(e.files[0]!.id), 200);
    const v2 = await version();
    expect(v2).toBeGreaterThan(v1);
    await db().execute(
      sql`insert into plus_chunks (file_id, team_id, plus_id, idx, file_data, file_data_processed, token_size) select file_id, team_id, plus_id, idx + 1, 'Zeta.', 'Zeta.', 1 from plus_chunks where team_id = ${team.teamId}::uuid and plus_id = ${e.id}::uuid`,
    );
    const v3 = await version();
    expect(v3).toBeGreaterThan(v2);
    await db().execute(sql`delete from plus_chunks where plus_id = ${e.id}::uuid and file_data = 'Zeta.'`);
    expect(await version()).toBeGreaterThan(v3);
    // an index built before a change is not current after it
    const idx = new LexicalIndexes(db(), 1_000_000);
    expect(idx.current(team.teamId, e.id, await version())).toBeUndefined();
    await idx.idle();
    expect(idx.current(team.teamId, e.id, await version())).toBeDefined();
    await db().execute(sql`update plus_entries set lexical_version = lexical_version + 1 where id = ${e.id}::uuid`);
    expect(idx.current(team.teamId, e.id, await version())).toBeUndefined();
    expect(idx.has(team.teamId, e.id)).toBe(false);
    await idx.idle(); // rebuilt at that version (the rebuild must not race the change below)
    expect(idx.current(team.teamId, e.id, await version())).toBeDefined();
    // chunks whose count disagrees with the entry's chunk_count (written by hand): not indexed, and not tried again at that version
    await db().execute(sql`update plus_entries set chunk_count = chunk_count + 1, lexical_version = lexical_version + 1 where id = ${e.id}::uuid`);
    expect(idx.current(team.teamId, e.id, await version())).toBeUndefined();
    await idx.idle();
    expect(idx.has(team.teamId, e.id)).toBe(false);
    idx.current(team.teamId, e.id, await version());
    expect(idx.stats().building).toBe(0);
    await idx.close();
  });

  it('over HTTP: the service searches the index once built, and a change is answered at once, from the database, until it is rebuilt', async () => {
    const e = await createPlus([textFile('a.txt', 'The quokka lives on Rottnest Island.\n\nOther words about islands.')]);
    const ask = async (question: string) => {
      const res = await t
        .api(team.ownerKey)
        .POST('/api/v1/plus/{plusId}/context-for-prompt', { params: { path: { plusId: e.id } }, body: { content: question, explain: true } });
      return expectStatus(res, 200);
    };
    const indexes = t.services.plus.lexicalIndexes!;
    expect(indexes.has(team.teamId, e.id)).toBe(false);
    const first = await ask('Where does the quokka live?');
    expect(first.content).toContain('quokka');
    await indexes.idle();
    expect(indexes.has(team.teamId, e.id)).toBe(true);
    // the index answers the same (and reads the texts it packs)
    expect(await ask('Where does the quokka live?')).toEqual(first);
    // a new file: found by the very next question
    const up = expectStatus(await addFiles(e.id, [textFile('b.txt', 'The numbat eats termites.')]), 200);
    expect((await ask('What does the numbat eat?')).content).toContain('termites');
    await indexes.idle();
    expect(indexes.has(team.teamId, e.id)).toBe(true);
    expect((await ask('What does the numbat eat?')).content).toContain('termites');
    // a deleted file: gone from the very next answer
    expectStatus(await deleteFile(up.files.find((f) => f.filename === 'b.txt')!.id), 200);
    expect((await ask('What does the numbat eat?')).content).not.toContain('termites');
  });

  it('a chat turn over several entries uses their indexes (same sources as the SQL ranking)', async () => {
    const a = await createPlus([file('gpl-3.txt')], 'a');
    const b = await createPlus([file('mammoth-readme.md')], 'b');
    const entries = await t.services.plus.visibleIds({ teamId: team.teamId, userId: team.ownerId, role: 'owner' } as never, [a.id, b.id]);
    expect(entries.sort()).toEqual([a.id, b.id].sort());
    const indexes = t.services.plus.lexicalIndexes!;
    for (const id of [a.id, b.id]) indexes.current(team.teamId, id, -1);
    await indexes.idle();
    expect(indexes.has(team.teamId, a.id) && indexes.has(team.teamId, b.id)).toBe(true);
    await expectSameRanking([a.id, b.id], [await indexOf(a.id), await indexOf(b.id)], {
      text: 'How do I convert a document with style maps under the licence?',
    });
  });
});

describe('size', () => {
  it('an entry larger than the limit is not indexed (searched in SQL); the least recently searched go first', async () => {
    const big = await createPlus([file('gpl-3.txt')], 'big');
    const small1 = await createPlus([textFile('a.txt', 'One small file.')], 's1');
    const small2 = await createPlus([textFile('b.txt', 'Another small file.')], 's2');
    const versionOf = async (id: string) =>
      Number(
        ((await db().execute(sql`select lexical_version as v from plus_entries where id = ${id}::uuid`)) as unknown as { rows: Array<{ v: number | string }> })
          .rows[0]!.v,
      );
    const indexes = new LexicalIndexes(db(), 2);
    indexes.current(team.teamId, big.id, await versionOf(big.id));
    await indexes.idle();
    expect(indexes.has(team.teamId, big.id)).toBe(false);
    // not tried again at the same version
    indexes.current(team.teamId, big.id, await versionOf(big.id));
    expect(indexes.stats().building).toBe(0);
    indexes.current(team.teamId, small1.id, await versionOf(small1.id));
    await indexes.idle();
    indexes.current(team.teamId, small2.id, await versionOf(small2.id));
    await indexes.idle();
    expect(indexes.stats()).toMatchObject({ entries: 2, chunks: 2 });
    const third = await createPlus([textFile('c.txt', 'A third one.')], 's3');
    indexes.current(team.teamId, small1.id, await versionOf(small1.id)); // small1 used: small2 is now the oldest
    indexes.current(team.teamId, third.id, await versionOf(third.id));
    await indexes.idle();
    expect([indexes.has(team.teamId, small1.id), indexes.has(team.teamId, small2.id), indexes.has(team.teamId, third.id)]).toEqual([true, false, true]);
    expect(indexes.stats().bytes).toBeGreaterThan(0);
    await indexes.close();
  });
});
