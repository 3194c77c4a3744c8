import { and, asc, eq, inArray, or, sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../../db/client.js';
import { plusChunks, plusEntries, plusFiles } from '../../db/schema.js';

export type PlusRow = typeof plusEntries.$inferSelect;
export type PlusFileRow = Omit<typeof plusFiles.$inferSelect, 'content' | 'text'>;
export type ChunkRow = Pick<typeof plusChunks.$inferSelect, 'id' | 'fileId' | 'idx' | 'fileData' | 'fileDataProcessed' | 'tokenSize'>;

export interface Viewer {
  teamId: string;
  userId: number;
  admin: boolean;
}

const FILE_COLUMNS = {
  id: plusFiles.id,
  plusId: plusFiles.plusId,
  userId: plusFiles.userId,
  threadId: plusFiles.threadId,
  filename: plusFiles.filename,
  mimeType: plusFiles.mimeType,
  bytes: plusFiles.bytes,
  tokenSize: plusFiles.tokenSize,
  summary: plusFiles.summary,
  created: plusFiles.created,
};

export interface NewFile {
  id: string;
  plusId: string;
  userId: number;
  threadId: string | null;
  filename: string;
  mimeType: string;
  content: Buffer;
  text: string;
  tokenSize: number;
  summary: string | null;
  created: Date;
  chunks: Array<{ idx: number; fileData: string; fileDataProcessed: string; tokenSize: number }>;
}

const CHUNK_INSERT_BATCH = 500;

export class PlusRepo {
  /** CONTRACT §3: public entries are seen by the team; private ones by their creator and the team's owners/admins. */
  visible(v: Viewer): SQL {
    return and(
      eq(plusEntries.teamId, v.teamId),
      v.admin ? undefined : or(eq(plusEntries.isPublic, true), eq(plusEntries.userId, v.userId)),
    )!;
  }

  async list(db: Executor, v: Viewer, showPublic: boolean): Promise<PlusRow[]> {
    const where = showPublic ? this.visible(v) : and(eq(plusEntries.teamId, v.teamId), eq(plusEntries.userId, v.userId));
    return db.select().from(plusEntries).where(where).orderBy(asc(plusEntries.created), asc(plusEntries.id));
  }

  async find(db: Executor, v: Viewer, id: string): Promise<PlusRow | undefined> {
    const [row] = await db.select().from(plusEntries).where(and(eq(plusEntries.id, id), this.visible(v)));
    return row;
  }

  async findMany(db: Executor, v: Viewer, ids: string[]): Promise<PlusRow[]> {
    if (ids.length === 0) return [];
    return db.select().from(plusEntries).where(and(inArray(plusEntries.id, ids), this.visible(v)));
  }

  async exists(db: Executor, id: string): Promise<boolean> {
    const [row] = await db.select({ id: plusEntries.id }).from(plusEntries).where(eq(plusEntries.id, id));
    return row !== undefined;
  }

  async insert(db: Executor, v: typeof plusEntries.$inferInsert): Promise<void> {
    await db.insert(plusEntries).values(v);
  }

  async update(db: Executor, id: string, v: Partial<typeof plusEntries.$inferInsert>): Promise<void> {
    await db.update(plusEntries).set({ ...v, updated: new Date() }).where(eq(plusEntries.id, id));
  }

  async delete(db: Executor, id: string): Promise<void> {
    await db.delete(plusEntries).where(eq(plusEntries.id, id));
  }

  async insertFiles(db: Executor, files: NewFile[]): Promise<void> {
    for (const f of files) {
      const { chunks, ...file } = f;
      await db.insert(plusFiles).values({ ...file, bytes: file.content.length });
      for (let i = 0; i < chunks.length; i += CHUNK_INSERT_BATCH) {
        await db.insert(plusChunks).values(chunks.slice(i, i + CHUNK_INSERT_BATCH).map((c) => ({ ...c, fileId: f.id, plusId: f.plusId })));
      }
    }
  }

  async filesOf(db: Executor, plusIds: string[]): Promise<PlusFileRow[]> {
    if (plusIds.length === 0) return [];
    return db.select(FILE_COLUMNS).from(plusFiles).where(inArray(plusFiles.plusId, plusIds)).orderBy(asc(plusFiles.created), asc(plusFiles.id));
  }

  async chunksOf(db: Executor, fileIds: string[]): Promise<ChunkRow[]> {
    if (fileIds.length === 0) return [];
    return db
      .select({ id: plusChunks.id, fileId: plusChunks.fileId, idx: plusChunks.idx, fileData: plusChunks.fileData, fileDataProcessed: plusChunks.fileDataProcessed, tokenSize: plusChunks.tokenSize })
      .from(plusChunks)
      .where(inArray(plusChunks.fileId, fileIds))
      .orderBy(asc(plusChunks.fileId), asc(plusChunks.idx));
  }

  /** A file with its entry, if the entry is visible. */
  async findFile(db: Executor, v: Viewer, fileId: string): Promise<{ file: PlusFileRow; entry: PlusRow } | undefined> {
    const [row] = await db
      .select({ file: FILE_COLUMNS, entry: plusEntries })
      .from(plusFiles)
      .innerJoin(plusEntries, eq(plusEntries.id, plusFiles.plusId))
      .where(and(eq(plusFiles.id, fileId), this.visible(v)));
    return row;
  }

  async fileContent(db: Executor, fileId: string): Promise<Buffer | undefined> {
    const [row] = await db.select({ content: plusFiles.content }).from(plusFiles).where(eq(plusFiles.id, fileId));
    return row?.content;
  }

  async deleteFile(db: Executor, fileId: string): Promise<void> {
    await db.delete(plusFiles).where(eq(plusFiles.id, fileId));
  }

  /** Files linked to a thread through the chat's add-file (`onlyUserId`: a PRIVATE-context workspace). */
  async threadFiles(db: Executor, teamId: string, threadId: string, onlyUserId?: number): Promise<Array<{ id: string; plusId: string }>> {
    return db
      .select({ id: plusFiles.id, plusId: plusFiles.plusId })
      .from(plusFiles)
      .innerJoin(plusEntries, eq(plusEntries.id, plusFiles.plusId))
      .where(and(eq(plusFiles.threadId, threadId), eq(plusEntries.teamId, teamId), onlyUserId !== undefined ? eq(plusFiles.userId, onlyUserId) : undefined));
  }

  /** Titles of entries whose files were added to the workspace's threads, for default greetings. */
  async titlesForWorkspace(db: Executor, v: Viewer, workspaceId: string): Promise<string[]> {
    const rows = await db
      .selectDistinct({ title: plusEntries.title })
      .from(plusEntries)
      .innerJoin(plusFiles, eq(plusFiles.plusId, plusEntries.id))
      .where(and(this.visible(v), sql`${plusFiles.threadId} in (select id from chat_threads where workspace_id = ${workspaceId})`))
      .limit(5);
    return rows.map((r) => r.title).filter((t): t is string => !!t);
  }
}
