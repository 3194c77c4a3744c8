import { and, eq, inArray } from 'drizzle-orm';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { chatThreads } from '../../src/db/schema/chat.js';
import { workspaces } from '../../src/db/schema/workspaces.js';
import {
  changeableThreadsSql,
  mayChangeThread,
  mayReadThread,
  readableThreadsSql,
  type ChatHistoryType,
  type Principal,
  type SharingType,
  type ThreadWorkspace,
} from '../../src/policy/index.js';
import { checkRule, makeRows, startMatrix, table, type Matrix, type Row } from './matrix.js';

/**
 * One workspace a creator and flag (`sharingType/chatHistoryType`), one thread in it that the
 * creator started; a thread of a workspace is read by those who see the workspace, by its history.
 */
let m: Matrix;
let rows: Row[];
const spaces = new Map<string, ThreadWorkspace>();

beforeAll(async () => {
  m = await startMatrix();
  const { db } = m.t.database;
  rows = await makeRows(m, ['TEAM/TEAM', 'TEAM/USER', 'PRIVATE/TEAM', 'PRIVATE/USER'], async (creator: Principal, flag, id) => {
    const [sharingType, chatHistoryType] = flag.split('/') as [SharingType, ChatHistoryType];
    const ws = { id: randomUUID(), teamId: creator.teamId, userId: creator.userId, sharingType, chatHistoryType };
    await db.insert(workspaces).values({ ...ws, name: flag, contextType: 'SHARED' });
    await db.insert(chatThreads).values({ id, teamId: creator.teamId, workspaceId: ws.id, userId: creator.userId, title: flag });
    spaces.set(id, ws);
  });
});
afterAll(() => m.t.close());

const thread = (r: Row) => ({ teamId: r.creator.teamId, workspaceId: spaces.get(r.id)!.id, userId: r.creator.userId });
async function select(where: (p: Principal) => ReturnType<typeof readableThreadsSql>, p: Principal, ids: string[]) {
  const rows = await m.t.database.db
    .select({ id: chatThreads.id })
    .from(chatThreads)
    .innerJoin(workspaces, and(eq(workspaces.teamId, chatThreads.teamId), eq(workspaces.id, chatThreads.workspaceId)))
    .where(and(where(p), inArray(chatThreads.id, ids)));
  return rows.map((r) => r.id);
}

describe('chat threads (policy/threads.ts)', () => {
  it('history TEAM: every one who sees the workspace reads all its threads; USER: only the threads they started, team owners/admins too', async () => {
    const expected = table(`
      role    who      TEAM/TEAM  TEAM/USER  PRIVATE/TEAM  PRIVATE/USER
      owner   creator  yes        yes        yes           yes
      owner   other    yes        no         no            no
      admin   creator  yes        yes        yes           yes
      admin   other    yes        no         no            no
      member  creator  yes        yes        yes           yes
      member  other    yes        no         no            no
    `);
    await checkRule(
      m,
      rows,
      expected,
      (p, r) => mayReadThread(p, spaces.get(r.id)!, thread(r)),
      (p, ids) => select((v) => readableThreadsSql(v, chatThreads, workspaces), p, ids),
    );
  });

  it('of the threads read, the one who started it and the team owners/admins change (rename, pin, delete) it', async () => {
    const expected = table(`
      role    who      TEAM/TEAM  TEAM/USER  PRIVATE/TEAM  PRIVATE/USER
      owner   creator  yes        yes        yes           yes
      owner   other    yes        no         no            no
      admin   creator  yes        yes        yes           yes
      admin   other    yes        no         no            no
      member  creator  yes        yes        yes           yes
      member  other    no         no         no            no
    `);
    await checkRule(
      m,
      rows,
      expected,
      (p, r) => mayReadThread(p, spaces.get(r.id)!, thread(r)) && mayChangeThread(p, thread(r)),
      (p, ids) => select((v) => changeableThreadsSql(v, chatThreads, workspaces), p, ids),
    );
  });
});
