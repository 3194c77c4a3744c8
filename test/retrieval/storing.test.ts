/**
 * Files stored in steps (src/modules/plus/store.ts): a file whose chunks are still being written
 * is part of nothing — listings, downloads, searches, the in-memory index, the statistics — and
 * a store that fails, or that a crash cut short, leaves nothing behind. On PGlite, or on
 * PostgreSQL when ATRIUM_TEST_DATABASE_URL is set.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execute } from '../../src/db/driver.js';
import type { NewFile } from '../../src/modules/plus/repo.js';
import { storeFiles, sweepUnfinished } from '../../src/modules/plus/store.js';
import { buildEntryIndex } from '../../src/retrieval/lexical-index/indexes.js';
import { EntryIndex } from '../../src/retrieval/lexical-index/entry-index.js';
import { newTeam, startTestApp, type TeamFixture, type TestApp } from '../helpers/app.js';
import { expectStatus, multipartBody } from '../helpers/api.js';
import { newPlusFile } from '../helpers/factories.js';

let t: TestApp;
let team: TeamFixture;
beforeAll(async () => {
  // the in-memory index on both databases (by default only the embedded one builds them)
  t = await startTestApp({ lexicalIndex: { mode: 'on', maxChunks: 1_000_000 } });
  team = await newTeam(t);
});
afterAll(async () => {
  await t.close();
});

const db = () => t.database.db;
const api = () => t.api(team.ownerKey);
const plusAt = (plusId: string) => ({ params: { path: { plusId } } });

const SEEN = 'The harbour ledger counts carts of timber.';
// it shares the visible file's words: unless left out, its chunks are candidates of the same question
const HIDDEN = 'The harbour ledger of the unfinished file counts a zebraquartz.';

function newFile(plusId: string, texts: string[], idx = (i: number) => i): NewFile {
  return newPlusFile(
    team,
    plusId,
    texts.map((text, i) => ({ idx: idx(i), fileData: text, fileDataProcessed: text, tokenSize: 8 })),
  );
}

async function entryState(plusId: string) {
  const { rows } = await execute<{ chunk_count: number; version: string; files: number; chunks: number; terms: number }>(
    db(),
    sql`select e.chunk_count, e.lexical_version::text as version,
          (select count(*)::int from plus_files f where f.plus_id = e.id) as files,
          (select count(*)::int from plus_chunks c where c.plus_id = e.id) as chunks,
          (select count(*)::int from plus_terms m where m.plus_id = e.id) as terms
        from plus_entries e where e.team_id = ${team.teamId}::uuid and e.id = ${plusId}::uuid`,
  );
  return rows[0]!;
}

/** An entry uploaded with one file, of SEEN. */
async function entryOfSeen(title: string) {
  const parts = [
    { name: 'title', value: title },
    { name: 'files', filename: 'seen.txt', contentType: 'text/plain', data: Buffer.from(SEEN) },
  ];
  return expectStatus(await api().POST('/api/v1/plus', multipartBody(parts)), 200);
}

/** An entry with one stored file of SEEN, and a file left storing (as a crash mid-upload leaves it) with chunks of HIDDEN. */
async function entryWithUnfinishedFile() {
  const entry = await entryOfSeen('ledgers');
  const before = await entryState(entry.id);
  const unfinished = newFile(entry.id, [HIDDEN, `${HIDDEN} Again.`]);
  const { chunks, ...row } = unfinished;
  await execute(
    db(),
    sql`insert into plus_files (id, team_id, plus_id, user_id, filename, mime_type, bytes, content, token_size, storing, created)
        values (${row.id}::uuid, ${row.teamId}::uuid, ${row.plusId}::uuid, ${row.userId}, ${row.filename}, 'text/plain', 1, ${row.content}, 16, true, now() - interval '2 hours')`,
  );
  for (let i = 0; i < chunks.length; i++) {
    const c = chunks.at(i)!;
    await execute(
      db(),
      sql`insert into plus_chunks (file_id, team_id, plus_id, idx, file_data, file_data_processed, token_size)
          values (${row.id}::uuid, ${row.teamId}::uuid, ${row.plusId}::uuid, ${c.idx}, ${c.fileData}, ${c.fileDataProcessed}, 8)`,
    );
  }
  return { entry, before, unfinished };
}

describe('a file still being stored is part of nothing', () => {
  it('not listed, downloaded, deleted, searched, indexed or counted; then swept', async () => {
    const { entry, before, unfinished } = await entryWithUnfinishedFile();
    // its chunks raised no version (the trigger of migration 0033) and no statistics
    const during = await entryState(entry.id);
    expect(during.version).toBe(before.version);
    expect(during.chunk_count).toBe(before.chunk_count);
    expect(during.terms).toBe(before.terms);
    expect(during.chunks).toBe(before.chunk_count + 2);

    const got = expectStatus(await api().GET('/api/v1/plus/{plusId}', plusAt(entry.id)), 200);
    expect(got.files.map((f) => f.filename)).toEqual(['seen.txt']);
    const fileAt = { params: { path: { fileId: unfinished.id } } };
    expect((await api().GET('/api/v1/plus/file/{fileId}/content', fileAt)).response.status).toBe(404);
    expect((await api().DELETE('/api/v1/plus/file/{fileId}', fileAt)).response.status).toBe(404);

    // searched in SQL (no index yet) and then from the in-memory index, once it is built
    for (let i = 0; i < 2; i++) {
      const found = expectStatus(
        await api().POST('/api/v1/plus/{plusId}/context-for-prompt', { ...plusAt(entry.id), body: { content: 'zebraquartz harbour ledger', maxTokens: 500 } }),
        200,
      );
      expect(found.content).toContain('harbour ledger');
      expect(found.content).not.toContain('zebraquartz');
      await t.services.plus.lexicalIndexes!.idle();
    }
    expect(t.services.plus.lexicalIndexes!.has(team.teamId, entry.id)).toBe(true);
    const index = await buildEntryIndex(db(), team.teamId, entry.id, 1_000_000);
    expect(index).toBeInstanceOf(EntryIndex);
    expect((index as EntryIndex).chunks).toBe(before.chunk_count);

    expect(await sweepUnfinished(db(), 3_600_000)).toBeGreaterThanOrEqual(1);
    const after = await entryState(entry.id);
    expect(after).toEqual({ ...before, version: after.version });
    expect(after.chunks).toBe(before.chunk_count);
  });

  it('a file storing for less than the sweep age is left to its upload', async () => {
    const plusId = randomUUID();
    await execute(db(), sql`insert into plus_entries (id, team_id, user_id, title) values (${plusId}::uuid, ${team.teamId}::uuid, ${team.ownerId}, 'young')`);
    const young = newFile(plusId, ['still arriving']);
    await execute(
      db(),
      sql`insert into plus_files (id, team_id, plus_id, user_id, filename, mime_type, bytes, content, token_size, storing)
          values (${young.id}::uuid, ${team.teamId}::uuid, ${plusId}::uuid, ${team.ownerId}, 'young.txt', 'text/plain', 1, ${young.content}, 1, true)`,
    );
    await sweepUnfinished(db(), 3_600_000);
    expect((await entryState(plusId)).files).toBe(1);
  });
});

describe('a store that fails leaves nothing', () => {
  it("a chunk that cannot be written takes the request's files back; the entry's statistics are unchanged", async () => {
    const entry = await entryOfSeen('kept');
    const before = await entryState(entry.id);
    const many = Array.from({ length: 400 }, (_, i) => `Paragraph ${i} of the first file, about carts and harbours and the ledgers that count them.`);
    const good = newFile(entry.id, many);
    // the second file's last chunk has no index (NaN is sent as null): its statement fails after
    // the first file's chunks, several statements of them, were written
    const bad = newFile(entry.id, ['fine', 'broken'], (i) => (i === 1 ? Number.NaN : i));
    let lastRan = false;
    let undone = 0;
    await expect(
      storeFiles(db(), [good, bad], {
        first: async () => {},
        last: async () => {
          lastRan = true;
        },
        undo: async () => {
          undone++;
        },
      }),
    ).rejects.toThrow();
    expect(lastRan).toBe(false);
    expect(undone).toBe(1);
    expect(await entryState(entry.id)).toEqual(before);
  });

  it('`undo` is called only for what `first` committed: a failed `first` leaves nothing to take back', async () => {
    let undone = 0;
    const f = newFile(randomUUID(), ['a chunk']);
    await expect(
      storeFiles(db(), [f], {
        first: async () => {
          throw new Error('the entry could not be written');
        },
        last: async () => {},
        undo: async () => {
          undone++;
        },
      }),
    ).rejects.toThrow('the entry could not be written');
    expect(undone).toBe(0);
  });

  it('what `first` wrote and `last` would write are of one store: `last` runs once the chunks are in', async () => {
    const plusId = randomUUID();
    const f = newFile(plusId, ['one chunk about ledgers', 'another about carts']);
    const seen: Array<{ files: number; chunks: number; count: number }> = [];
    await storeFiles(db(), [f], {
      first: async (tx) => {
        await execute(
          tx,
          sql`insert into plus_entries (id, team_id, user_id, title) values (${plusId}::uuid, ${team.teamId}::uuid, ${team.ownerId}, 'made in first')`,
        );
      },
      last: async (tx) => {
        const { rows } = await execute<{ files: number; chunks: number; count: number }>(
          tx,
          sql`select (select count(*)::int from plus_files where plus_id = ${plusId}::uuid and not storing) as files,
                     (select count(*)::int from plus_chunks where plus_id = ${plusId}::uuid) as chunks,
                     (select chunk_count from plus_entries where id = ${plusId}::uuid) as count`,
        );
        seen.push(rows[0]!);
      },
    });
    expect(seen).toEqual([{ files: 1, chunks: 2, count: 2 }]);
    expect((await entryState(plusId)).terms).toBeGreaterThan(0);
  });
});
