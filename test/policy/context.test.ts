import { and, inArray } from 'drizzle-orm';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { plusEntries, plusFiles } from '../../src/db/schema/plus.js';
import { mayUseContextFile, usableContextFilesSql, type ContextType } from '../../src/policy/index.js';
import { checkRule, makeRows, startMatrix, table, type Matrix, type Row } from './matrix.js';

/** A file each creator added to a thread, under each contextType of its workspace. */
let m: Matrix;
let rows: Row[];

beforeAll(async () => {
  m = await startMatrix();
  const { db } = m.t.database;
  const threadId = randomUUID();
  rows = await makeRows(m, ['SHARED', 'PRIVATE'], async (creator, flag, id) => {
    const plusId = randomUUID();
    await db.insert(plusEntries).values({ id: plusId, teamId: creator.teamId, userId: creator.userId, title: 'chat files' });
    await db.insert(plusFiles).values({
      id,
      teamId: creator.teamId,
      plusId,
      userId: creator.userId,
      threadId,
      filename: `${flag}.txt`,
      mimeType: 'text/plain',
      bytes: 4,
      content: Buffer.from('text'),
      tokenSize: 1,
    });
  });
});
afterAll(() => m.t.close());

describe("a thread's files (policy/context.ts)", () => {
  it("contextType SHARED: every reader of the thread's turns use them; PRIVATE: only the user who added each", async () => {
    const expected = table(`
      role    who      SHARED  PRIVATE
      owner   creator  yes     yes
      owner   other    yes     no
      admin   creator  yes     yes
      admin   other    yes     no
      member  creator  yes     yes
      member  other    yes     no
    `);
    await checkRule(
      m,
      rows,
      expected,
      (p, r) => mayUseContextFile(p, r.flag as ContextType, { teamId: r.creator.teamId, userId: r.creator.userId }),
      async (p, ids) => {
        const found: string[] = [];
        for (const flag of ['SHARED', 'PRIVATE'] as const) {
          const mine = ids.filter((id) => rows.find((r) => r.id === id)!.flag === flag);
          const sel = await m.t.database.db
            .select({ id: plusFiles.id })
            .from(plusFiles)
            .where(and(usableContextFilesSql(p, flag, plusFiles), inArray(plusFiles.id, mine)));
          found.push(...sel.map((r) => r.id));
        }
        return found;
      },
    );
  });
});
