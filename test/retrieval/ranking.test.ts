/**
 * The lexical ranking's properties, each on small constructed documents where the
 * right chunk must win: BM25 term-frequency saturation, chunk-length normalisation, section
 * headings as a boosted field, phrase/proximity, ties decided by diversity rather than document
 * order, follow-ups carrying the previous question's key terms — on PGlite, or on PostgreSQL when
 * ATRIUM_TEST_DATABASE_URL is set.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chunkText } from '../../src/ingest/chunk.js';
import { PlusRepo, type NewFile } from '../../src/modules/plus/repo.js';
import { storeFiles } from '../../src/modules/plus/store.js';
import { newPlusFile } from '../helpers/factories.js';
import { sql } from 'drizzle-orm';
import { RetrievalRepo, type ScoredChunk } from '../../src/retrieval/repo.js';
import { TERM_OPTIONS } from '../../src/retrieval/query.js';
import { BM25 } from '../../src/retrieval/scoring.js';
import { bodyTf } from '../../src/retrieval/search-sql.js';
import { EntryIndex } from '../../src/retrieval/lexical-index/entry-index.js';
import { buildEntryIndex } from '../../src/retrieval/lexical-index/indexes.js';
import { indexTermStats } from '../../src/retrieval/lexical-index/term-stats.js';
import { newTeam, startTestApp, type TeamFixture, type TestApp } from '../helpers/app.js';

let t: TestApp;
let team: TeamFixture;
beforeAll(async () => {
  t = await startTestApp();
  team = await newTeam(t);
});
afterAll(async () => {
  await t.close();
});

const db = () => t.database.db;
const plusRepo = new PlusRepo();
const retrieval = new RetrievalRepo();
/** the same, reading every step's features in batches of two candidates (as it does in a large scope) */
const batched = new RetrievalRepo(TERM_OPTIONS, { splitAbove: 0, batch: 2, window: 0, windowsIfPlanned: true });
/** and reading the candidates' ids in windows of chunk ids of about one candidate each, whatever the plan */
const windowed = new RetrievalRepo(TERM_OPTIONS, { splitAbove: 0, batch: 2, window: 1, windowsIfPlanned: false });

interface ChunkSpec {
  text: string;
  heading?: string | null;
  /** token count (BM25's chunk length); default: the number of words */
  tokens?: number;
}

/** One entry; each inner array is a file with exactly those chunks, written by PlusRepo as uploads are. */
async function entry(files: ChunkSpec[][]): Promise<{ plusId: string; fileIds: string[]; chunkIds: number[][] }> {
  const plusId = randomUUID();
  await plusRepo.insert(db(), { id: plusId, teamId: team.teamId, userId: team.ownerId, title: 'constructed' });
  const newFiles: NewFile[] = files.map((chunks, i) => {
    const sized = chunks.map((c, idx) => ({
      idx,
      fileData: c.text,
      fileDataProcessed: c.text,
      heading: c.heading ?? null,
      tokenSize: c.tokens ?? c.text.split(/\s+/).length,
    }));
    return newPlusFile(team, plusId, sized, `file-${i}.txt`);
  });
  await storeFiles(db(), newFiles, { first: async () => {}, last: async () => {} });
  const chunkIds: number[][] = [];
  for (const f of newFiles) {
    const rows = (await plusRepo.chunksOf(db(), [f.id])).sort((a, b) => a.idx - b.idx);
    chunkIds.push(rows.map((r) => Number(r.id)));
  }
  return { plusId, fileIds: newFiles.map((f) => f.id), chunkIds };
}

/**
 * The SQL ranking — and, every time, the in-memory index's (retrieval/lexical-index/) of the
 * same entry and the SQL's with features read in batches (and ids in windows), which must be the same to the last
 * bit: same chunks, order, scores and steps.
 */
async function ranked(plusId: string, question: string, carry?: string, limit = 50): Promise<ScoredChunk[]> {
  const q = { text: question, carry };
  const bySql = await retrieval.search(db(), { scope: { teamId: team.teamId, plusIds: [plusId], fileIds: [] }, question: q }, limit);
  const index = await buildEntryIndex(db(), team.teamId, plusId, 1_000_000);
  if (!(index instanceof EntryIndex)) throw new Error('the entry was not indexed');
  const inMemory = await retrieval.search(db(), { teamId: team.teamId, indexes: [index], n: bySql.stats.n, question: q }, limit);
  expect(inMemory.chunks.map((c) => [c.chunkId, c.score, c.rank])).toEqual(bySql.chunks.map((c) => [c.chunkId, c.score, c.rank]));
  for (const split of [batched, windowed]) {
    const inBatches = await split.search(db(), { scope: { teamId: team.teamId, plusIds: [plusId], fileIds: [] }, question: q }, limit);
    expect(inBatches.chunks.map((c) => [c.chunkId, c.score, c.rank])).toEqual(bySql.chunks.map((c) => [c.chunkId, c.score, c.rank]));
  }
  expect({ choice: inMemory.choice, steps: inMemory.steps, leading: inMemory.leading }).toEqual({
    choice: bySql.choice,
    steps: bySql.steps,
    leading: bySql.leading,
  });
  // both rank without texts and headings: hydrate reads them
  await retrieval.hydrate(db(), bySql.chunks);
  return bySql.chunks;
}

/** The SQL term statistics — and the in-memory index's, which must be the same. */
async function termStats(plusId: string, q: { text: string; carry?: string }) {
  const bySql = await retrieval.termStats(db(), { teamId: team.teamId, plusIds: [plusId], fileIds: [] }, q);
  const index = await buildEntryIndex(db(), team.teamId, plusId, 1_000_000);
  if (!(index instanceof EntryIndex)) throw new Error('the entry was not indexed');
  const byLexeme = (a: { lexeme: string }, b: { lexeme: string }) => (a.lexeme < b.lexeme ? -1 : 1);
  expect(indexTermStats([index], await retrieval.questionLexemes(db(), q)).sort(byLexeme)).toEqual([...bySql.terms].sort(byLexeme));
  expect(index.tokens).toBe(bySql.tokens);
  expect(index.files.length).toBe(bySql.files);
  return bySql;
}

/** n filler words that no question asks about. */
const filler = (n: number, word = 'lorem') => Array.from({ length: n }, (_, i) => `${word}${String.fromCharCode(97 + (i % 26))}`).join(' ');
/** Unrelated chunks, so that the question's words are rare in the entry (a realistic idf). */
const others = (n: number): ChunkSpec[] => Array.from({ length: n }, (_, i) => ({ text: `${filler(30, `other${i}x`)}` }));

describe('storage', () => {
  it("keeps a chunk's tsvector and processed text in the heap row (a search reads them for every candidate; TOAST would add an index lookup per row)", async () => {
    const r = (await db().execute(
      sql`select attname, attstorage from pg_attribute where attrelid = 'plus_chunks'::regclass and attname in ('search', 'file_data_processed') order by attname`,
    )) as unknown as { rows: Array<{ attname: string; attstorage: string }> };
    expect(r.rows).toEqual([
      { attname: 'file_data_processed', attstorage: 'm' },
      { attname: 'search', attstorage: 'm' },
    ]);
  });
});

describe('BM25 scoring', () => {
  it("reads a lexeme's occurrences in the text exactly, headings not counted", async () => {
    for (const n of [0, 1, 2, 3, 7, 25, 60, 200]) {
      const text = `${'zebra giraffe '.repeat(n)}other words`;
      const r = (await db().execute(
        sql`select ${bodyTf(sql`(to_tsvector('english', ${text}) || setweight(to_tsvector('english', 'Zebra facts'), 'A'))`, "'zebra'")} as tf`,
      )) as unknown as { rows: Array<{ tf: number | string }> };
      expect(Number(r.rows[0]!.tf)).toBe(n);
    }
  });

  it('term frequency counts, but saturates: more occurrences rank higher, ten never score ten times one', async () => {
    const e = await entry([
      [{ text: `zebra ${filler(29)}` }],
      [{ text: `zebra zebra ${filler(28)}` }],
      [{ text: `${'zebra '.repeat(10)}${filler(20)}` }],
      others(20),
    ]);
    const r = await ranked(e.plusId, 'zebra?');
    const score = (fileIdx: number) => r.find((c) => c.chunkId === e.chunkIds[fileIdx]![0])!.score;
    expect(r.slice(0, 3).map((c) => c.chunkId)).toEqual([e.chunkIds[2]![0], e.chunkIds[1]![0], e.chunkIds[0]![0]]);
    // same length: tf × (k1 + 1) / (tf + k1) — bounded by k1 + 1 times the score of one occurrence
    expect(score(2) / score(0)).toBeLessThan(BM25.k1 + 1);
    expect(score(2) / score(0)).toBeCloseTo((10 * (BM25.k1 + 1)) / (10 + BM25.k1) / ((1 * (BM25.k1 + 1)) / (1 + BM25.k1)), 5);
    // the step from 1 to 2 is worth more than the step from 2 to 10 per occurrence
    expect(score(1) - score(0)).toBeGreaterThan((score(2) - score(1)) / 8);
  });

  it('a question word found in a short chunk outranks the same word once in a long one', async () => {
    const e = await entry([[{ text: `${filler(200)} zebra ${filler(200, 'ipsum')}` }], [{ text: `zebra ${filler(20)}` }], others(10)]);
    const r = await ranked(e.plusId, 'Tell me about the zebra');
    expect(r[0]!.chunkId).toBe(e.chunkIds[1]![0]);
    expect(r[1]!.chunkId).toBe(e.chunkIds[0]![0]);
    expect(r[0]!.score).toBeGreaterThan(r[1]!.score);
  });

  it('holding two of the question words beats holding one of them many times', async () => {
    const e = await entry([[{ text: `${'zebra '.repeat(8)}${filler(22)}` }], [{ text: `zebra giraffe ${filler(28)}` }], others(20)]);
    const r = await ranked(e.plusId, 'zebra and giraffe');
    expect(r[0]!.chunkId).toBe(e.chunkIds[1]![0]);
  });

  it("a question word in a chunk's section heading counts more than the same word in running text", async () => {
    const e = await entry([
      [{ text: `Notes. The zebra was fed at noon. ${filler(20)}` }],
      [{ text: `Notes. The zebra was fed at noon. ${filler(20, 'dolor')}`, heading: 'Zebra feeding' }],
      others(10),
    ]);
    const r = await ranked(e.plusId, 'zebra');
    expect(r[0]!.chunkId).toBe(e.chunkIds[1]![0]);
    expect(r[0]!.heading).toBe('Zebra feeding');
    expect(r[0]!.score).toBeGreaterThan(r[1]!.score);
    // the heading alone makes a chunk a candidate: its text need not hold the word
    const h = await entry([[{ text: `Feed them hay twice a day. ${filler(20)}`, heading: 'Caring for a zebra' }], others(5)]);
    expect((await ranked(h.plusId, 'zebra'))[0]!.chunkId).toBe(h.chunkIds[0]![0]);
  });

  it("the question's words together as a phrase, then near each other, outrank the same words apart", async () => {
    const e = await entry([
      [{ text: `zebra ${filler(15)} crossing ${filler(14, 'dolor')}` }],
      [{ text: `crossing ${filler(15, 'amet')} zebra ${filler(14, 'sitx')}` }],
      [{ text: `the zebra crossing ${filler(27, 'ipsum')}` }],
      [{ text: `crossing a zebra ${filler(27, 'elit')}` }],
      others(20),
    ]);
    const r = await ranked(e.plusId, 'Where is the zebra crossing?');
    expect(r.slice(0, 2).map((c) => c.chunkId)).toEqual([e.chunkIds[2]![0], e.chunkIds[3]![0]]);
    expect(r[1]!.score).toBeGreaterThan(r[2]!.score);
  });
});

describe('ties', () => {
  it('are decided by diversity (another file before a second chunk of the same file), not by document order', async () => {
    const same = `zebra stripes ${filler(20)}`;
    const e = await entry([[{ text: same }, { text: same }, { text: same }], [{ text: same }], others(10)]);
    const r = await ranked(e.plusId, 'zebra stripes', undefined, 2);
    expect(r).toHaveLength(2);
    expect(r[0]!.score).toBe(r[1]!.score);
    // document order alone would give the first file's first two chunks
    expect(new Set(r.map((c) => c.fileId))).toEqual(new Set(e.fileIds.slice(0, 2)));
    // then the shorter chunk: equal scores but one denser
    const d = await entry([[{ text: `zebra ${filler(20)}`, tokens: 40 }], [{ text: `zebra ${filler(20, 'dolor')}`, tokens: 25 }], others(5)]);
    const r2 = await ranked(d.plusId, 'zebra');
    expect(r2[0]!.chunkId).toBe(d.chunkIds[1]![0]);
  });

  it('ranks and lexical rankings are 1-based and follow the order', async () => {
    const e = await entry([[{ text: `zebra ${filler(10)}` }], [{ text: `zebra giraffe ${filler(10)}` }], others(5)]);
    const r = await ranked(e.plusId, 'zebra giraffe');
    r.forEach((c, i) => {
      expect(c.rank).toBe(i + 1);
      expect(c.ranking).toEqual({ lexical: { score: c.score, rank: i + 1 }, vector: null });
      if (i > 0) expect(c.score).toBeLessThanOrEqual(r[i - 1]!.score);
    });
  });
});

describe('follow-up questions', () => {
  it("carry the previous question's key terms: the follow-up finds the chunk about both", async () => {
    const e = await entry([
      [{ text: `Apache licence: patents are granted by each contributor. ${filler(20)}` }],
      [{ text: `GPL licence: patents are never used against users. ${filler(20, 'dolor')}` }],
      [{ text: `Apache licence: trademarks are not granted. ${filler(20, 'amet')}` }],
      others(10),
    ]);
    const alone = await ranked(e.plusId, 'And what about patents?');
    const carried = await ranked(e.plusId, 'And what about patents?', 'What does the Apache licence say about trademarks?');
    expect(carried[0]!.chunkId).toBe(e.chunkIds[0]![0]);
    // without the carried terms the two patent chunks are tied on the question's word
    expect(alone[0]!.score).toBe(alone[1]!.score);
    // the follow-up's own word leads: the trademarks chunk (carried words only) ranks below
    const trademarks = carried.findIndex((c) => c.chunkId === e.chunkIds[2]![0]);
    expect(trademarks).toBeGreaterThan(0);
  });

  it('a carried word weighs less than the same word asked now', async () => {
    const e = await entry([[{ text: `zebra ${filler(20)}` }], [{ text: `giraffe ${filler(20, 'dolor')}` }], others(10)]);
    const r = await ranked(e.plusId, 'giraffe', 'zebra');
    expect(r[0]!.chunkId).toBe(e.chunkIds[1]![0]);
    expect(r.map((c) => c.chunkId)).toContain(e.chunkIds[0]![0]);
  });
});

describe('question words absent from the documents', () => {
  it('a long one is found by its prefix: a spelling the stemmer keeps apart ("licence") finds the chunk that spells it otherwise ("license")', async () => {
    const e = await entry([
      [{ text: `The license grants every recipient these permissions. ${filler(20)}` }],
      [{ text: `Permissions of another kind. ${filler(20, 'dolor')}` }],
      others(10),
    ]);
    const stats = await termStats(e.plusId, { text: 'What does the licence grant?' });
    expect(stats.terms.map((t) => t.lexeme).sort()).toEqual(['grant', 'licens']);
    const r = await ranked(e.plusId, 'What does the licence say?');
    expect(r[0]!.chunkId).toBe(e.chunkIds[0]![0]);
    // through the entry lookup too (PlusRepo.findWithTerms: the service's path)
    const found = await plusRepo.findWithTerms(db(), { teamId: team.teamId, userId: team.ownerId, role: 'owner' }, e.plusId, 'What does the licence say?');
    expect(found?.terms.map((t) => t.lexeme)).toEqual(['licens']);
  });

  it('a lexeme present in scope is never replaced, and a short absent one is not prefix-matched', async () => {
    const e = await entry([[{ text: `The licenced driver and the licensed driver. Cats and catalogues. ${filler(20)}` }], others(10)]);
    const stats = await termStats(e.plusId, { text: 'licenced cat dog' });
    // licenc is in the entry: taken as it is; cat is; dog (3 letters) is absent and stays absent
    expect(stats.terms.map((t) => t.lexeme).sort()).toEqual(['cat', 'licenc']);
    const none = await termStats(e.plusId, { text: 'catalog' });
    expect(none.terms.map((t) => t.lexeme)).toEqual(['catalogu']);
    const short = await termStats(e.plusId, { text: 'cats drive' });
    expect(short.terms.map((t) => t.lexeme)).toEqual(['cat']);
  });
});

describe('derived forms and long files', () => {
  it('an agent noun the stemmer keeps whole finds its verb ("compressor" → compress, "printer" → print), on both rankings', async () => {
    const e = await entry([
      [{ text: `Always compress the backups with zstd before you upload them. ${filler(20)}` }],
      [{ text: `Print the report on the second floor. ${filler(20, 'dolor')}` }],
      others(10),
    ]);
    const stats = await termStats(e.plusId, { text: 'Which compressor do we use?' });
    expect(stats.terms.map((t) => t.lexeme)).toEqual(['compress']);
    expect((await ranked(e.plusId, 'Which compressor do we use?'))[0]!.chunkId).toBe(e.chunkIds[0]![0]);
    expect((await ranked(e.plusId, 'Where is the printer?'))[0]!.chunkId).toBe(e.chunkIds[1]![0]);
    // a plural of it too; but a word more than three letters longer than any lexeme is left alone
    expect((await termStats(e.plusId, { text: 'compressors' })).terms.map((t) => t.lexeme)).toEqual(['compress']);
    expect((await retrieval.termStats(db(), { teamId: team.teamId, plusIds: [e.plusId], fileIds: [] }, { text: 'compressionists' })).terms).toEqual([]);
  });

  it('a long file does not take the first place from a short one that says the same (file-length prior)', async () => {
    const generic = (i: number) => ({ text: `Change the server settings in the panel. ${filler(20, `gen${i}x`)}` });
    const e = await entry([Array.from({ length: 20 }, (_, i) => generic(i)), [{ text: `Change the server settings in the panel. ${filler(20, 'short')}` }]]);
    const r = await ranked(e.plusId, 'How do I change the server settings?');
    expect(r[0]!.chunkId).toBe(e.chunkIds[1]![0]);
    expect(r[0]!.score).toBeGreaterThan(r[1]!.score);
  });
});

describe('chunk headings (chunking)', () => {
  it("a chunk that continues a long section carries the section's heading; a chunk holding headings lists them", () => {
    expect(chunkText('# Title\n\nIntro.\n\n## Part one\n\nSome text.\n')[0]!.heading).toBe('Title / Part one');
    const para = (w: string) => `${Array.from({ length: 60 }, (_, i) => `${w}${i}`).join(' ')}.`;
    const md = `# Guide\n\nIntro text here.\n\n## Installing the tool\n\n${[para('alpha'), para('beta'), para('gamma'), para('delta')].join('\n\n')}\n`;
    const chunks = chunkText(md, { maxTokens: 200, overlapTokens: 0 });
    expect(chunks.length).toBeGreaterThan(2);
    // the big section starts a chunk of its own; its heading line is in that chunk's text too
    expect(chunks[0]!.heading).toBe('Guide');
    expect(chunks[1]!.processed.startsWith('## Installing the tool')).toBe(true);
    expect(chunks[1]!.heading).toBe('Installing the tool');
    const later = chunks.at(-1)!;
    expect(later.processed).not.toContain('Installing the tool');
    expect(later.heading).toBe('Installing the tool');
    expect(chunkText('plain text without any heading at all.').map((c) => c.heading)).toEqual([null]);
  });
});
