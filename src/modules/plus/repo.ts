import { and, asc, eq, inArray, sql, type SQL } from 'drizzle-orm';
import type { Executor, Tx } from '../../db/client.js';
import { entryTermsSql, MAX_QUESTION_CHARS, parseEntryTerms } from '../../retrieval/search-sql.js';
import { execute, rawRows } from '../../db/driver.js';
import { lexemesOfVector, type QuestionLexeme } from '../../retrieval/lexical-index/question-lexemes.js';
import type { TermStat } from '../../retrieval/query.js';
import { plusChunks, plusEntries, plusFiles } from '../../db/schema/plus.js';
import { isUuid } from '../../uuid.js';
import {
  everyMemberReadsPlusSql,
  isTeamAdmin,
  usableContextFilesSql,
  visiblePlusSql,
  visiblePlusText,
  type ContextType,
  type Viewer,
} from '../../policy/index.js';

export type PlusRow = typeof plusEntries.$inferSelect;
export type PlusFileRow = Omit<typeof plusFiles.$inferSelect, 'content' | 'storing'>;
export type ChunkRow = Pick<typeof plusChunks.$inferSelect, 'id' | 'fileId' | 'idx' | 'fileData' | 'fileDataProcessed' | 'tokenSize'>;

/** Who reads: policy/plus.ts decides which entries they see. */
export type { Viewer };

const FILE_COLUMNS = {
  id: plusFiles.id,
  teamId: plusFiles.teamId,
  plusId: plusFiles.plusId,
  userId: plusFiles.userId,
  threadId: plusFiles.threadId,
  filename: plusFiles.filename,
  mimeType: plusFiles.mimeType,
  bytes: plusFiles.bytes,
  tokenSize: plusFiles.tokenSize,
  summary: plusFiles.summary,
  ocr: plusFiles.ocr,
  created: plusFiles.created,
};

export interface NewFile {
  id: string;
  teamId: string;
  plusId: string;
  userId: number;
  threadId: string | null;
  filename: string;
  mimeType: string;
  content: Buffer;
  tokenSize: number;
  summary: string | null;
  ocr?: boolean;
  created: Date;
  /** its chunks, read one at a time (an array, or ChunkReader over what ingestion packed) */
  chunks: NewChunks;
}

/** A file's chunks to store, read once each, in order. */
export interface NewChunks {
  readonly length: number;
  at(i: number): NewChunk | undefined;
}

export interface NewChunk {
  idx: number;
  fileData: string;
  fileDataProcessed: string;
  tokenSize: number;
  heading?: string | null;
}

/** Chunks read per statement by chunksOf: 400 took 29 ms at p50, up to 57 ms, on a busy 2-core machine. */
const CHUNK_PAGE = 200;

/**
 * The query text ts_stat() runs to count, per lexeme, the chunks of some files that contain it.
 * ts_stat takes SQL text, not parameters, so the ids are spliced in: they come from our own
 * randomUUID, and are checked against the UUID syntax here all the same.
 */
function chunkVectorsOf(fileIds: string[]): string {
  for (const id of fileIds) if (!isUuid(id)) throw new Error(`not a UUID: ${JSON.stringify(id)}`);
  return `select search from plus_chunks where file_id in (${fileIds.map((id) => `'${id}'`).join(', ')})`;
}

/** SQL this module owns that another repository embeds in its own statement (one round trip per turn). */
export const plusFileSql = {
  /** whether files were added to the thread from a chat (its turns then search them) */
  threadHasFiles(threadId: SQL): SQL {
    return sql`exists (select 1 from plus_files f where f.thread_id = ${threadId} and not f.storing)`;
  },
};

/** What a search needs of an entry (PlusRepo.findWithLexemes). */
export interface EntryForSearch {
  id: string;
  teamId: string;
  context: string | null;
  chunkCount: number;
  lexicalVersion: number;
}

/** PlusRepo.findWithLexemes's statement: `visible` and questionLexemesSql, written out ($1 id, $2 team, $3 team admin, $4 user, $5 question). */
const FIND_WITH_LEXEMES = `
  select e.id, e.team_id, e.context, e.chunk_count, e.lexical_version,
         to_tsvector('english', $5::text)::text as lexemes
  from plus_entries e
  where e.id = $1::uuid and ${visiblePlusText('e', { team: '$2', admin: '$3', user: '$4' })}`;

export class PlusRepo {
  /** The entries the viewer reads (policy/plus.ts). */
  visible(v: Viewer): SQL {
    return visiblePlusSql(v, plusEntries);
  }

  async list(db: Executor, v: Viewer, showPublic: boolean): Promise<PlusRow[]> {
    const where = showPublic ? this.visible(v) : and(eq(plusEntries.teamId, v.teamId), eq(plusEntries.userId, v.userId));
    return db.select().from(plusEntries).where(where).orderBy(asc(plusEntries.created), asc(plusEntries.id));
  }

  async find(db: Executor, v: Viewer, id: string): Promise<PlusRow | undefined> {
    const [row] = await this.findQuery(db, v, id);
    return row;
  }

  /** The query of `find` (the retrieval benchmark runs it as raw SQL). */
  findQuery(db: Executor, v: Viewer, id: string) {
    return db
      .select()
      .from(plusEntries)
      .where(and(eq(plusEntries.id, id), this.visible(v)));
  }

  /**
   * `find`, and in the same round trip the question's lexemes that occur in the entry with their
   * document frequency (retrieval's term statistics; the entry's chunk_count is their N).
   */
  async findWithTerms(
    db: Executor,
    v: Viewer,
    id: string,
    question: string,
  ): Promise<{ entry: PlusRow; terms: TermStat[]; tokens: number; files: number } | undefined> {
    const [row] = await db
      .select({ entry: plusEntries, terms: sql<unknown>`${entryTermsSql(sql`${plusEntries.teamId}`, sql`${plusEntries.id}`, question)}`.as('terms') })
      .from(plusEntries)
      .where(and(eq(plusEntries.id, id), this.visible(v)));
    return row && { entry: row.entry, ...parseEntryTerms(row.terms) };
  }

  /**
   * What a search of the entry's in-memory index needs of it, if it is visible — its version and
   * chunk count (is the index current?), team and context — and in the same statement the
   * question's lexemes. Sent past drizzle (db/driver.ts): it runs on every context-for-prompt.
   */
  async findWithLexemes(db: Executor, v: Viewer, id: string, question: string): Promise<{ entry: EntryForSearch; lexemes: QuestionLexeme[] } | undefined> {
    const [row] = await rawRows<{
      id: string;
      team_id: string;
      context: string | null;
      chunk_count: number;
      lexical_version: number | string;
      lexemes: string;
    }>(db, FIND_WITH_LEXEMES, [id, v.teamId, isTeamAdmin(v), v.userId, question.slice(0, MAX_QUESTION_CHARS)]);
    return (
      row && {
        entry: { id: row.id, teamId: row.team_id, context: row.context, chunkCount: row.chunk_count, lexicalVersion: Number(row.lexical_version) },
        lexemes: lexemesOfVector(row.lexemes),
      }
    );
  }

  async findMany(db: Executor, v: Viewer, ids: string[]): Promise<PlusRow[]> {
    if (ids.length === 0) return [];
    return db
      .select()
      .from(plusEntries)
      .where(and(inArray(plusEntries.id, ids), this.visible(v)));
  }

  /** Which of `ids` are entries of the team that every member reads (public ones). */
  async publicIds(db: Executor, teamId: string, ids: string[]): Promise<string[]> {
    if (ids.length === 0) return [];
    const rows = await db
      .select({ id: plusEntries.id })
      .from(plusEntries)
      .where(and(inArray(plusEntries.id, ids), everyMemberReadsPlusSql(teamId, plusEntries)));
    return rows.map((r) => r.id);
  }

  /** Whether the team has an entry of this id (another team's of the same id is no concern: ids are per team). */
  async exists(db: Executor, teamId: string, id: string): Promise<boolean> {
    const [row] = await db
      .select({ id: plusEntries.id })
      .from(plusEntries)
      .where(and(eq(plusEntries.teamId, teamId), eq(plusEntries.id, id)));
    return row !== undefined;
  }

  async insert(db: Executor, v: typeof plusEntries.$inferInsert): Promise<void> {
    await db.insert(plusEntries).values(v);
  }

  async update(db: Executor, teamId: string, id: string, v: Partial<typeof plusEntries.$inferInsert>): Promise<void> {
    await db
      .update(plusEntries)
      .set({ ...v, updated: new Date() })
      .where(and(eq(plusEntries.teamId, teamId), eq(plusEntries.id, id)));
  }

  async delete(db: Executor, teamId: string, id: string): Promise<void> {
    await db.delete(plusEntries).where(and(eq(plusEntries.teamId, teamId), eq(plusEntries.id, id)));
  }

  async filesOf(db: Executor, teamId: string, plusIds: string[]): Promise<PlusFileRow[]> {
    if (plusIds.length === 0) return [];
    return db
      .select(FILE_COLUMNS)
      .from(plusFiles)
      .where(and(eq(plusFiles.teamId, teamId), inArray(plusFiles.plusId, plusIds), eq(plusFiles.storing, false)))
      .orderBy(asc(plusFiles.created), asc(plusFiles.id));
  }

  /** The files' chunks in order, read a page per statement (a large file's would hold the embedded database for a second). */
  async chunksOf(db: Executor, fileIds: string[]): Promise<ChunkRow[]> {
    const out: ChunkRow[] = [];
    for (const fileId of [...fileIds].sort()) {
      let after = { idx: -1, id: 0 };
      for (;;) {
        const page = await db
          .select({
            id: plusChunks.id,
            fileId: plusChunks.fileId,
            idx: plusChunks.idx,
            fileData: plusChunks.fileData,
            fileDataProcessed: plusChunks.fileDataProcessed,
            tokenSize: plusChunks.tokenSize,
          })
          .from(plusChunks)
          .where(and(eq(plusChunks.fileId, fileId), sql`(${plusChunks.idx}, ${plusChunks.id}) > (${after.idx}, ${after.id})`))
          .orderBy(asc(plusChunks.idx), asc(plusChunks.id))
          .limit(CHUNK_PAGE);
        out.push(...page);
        if (page.length < CHUNK_PAGE) break;
        after = page[page.length - 1]!;
      }
    }
    return out;
  }

  /** A file with its entry, if the entry is visible. */
  async findFile(db: Executor, v: Viewer, fileId: string): Promise<{ file: PlusFileRow; entry: PlusRow } | undefined> {
    const [row] = await db
      .select({ file: FILE_COLUMNS, entry: plusEntries })
      .from(plusFiles)
      .innerJoin(plusEntries, and(eq(plusEntries.teamId, plusFiles.teamId), eq(plusEntries.id, plusFiles.plusId)))
      .where(and(eq(plusFiles.id, fileId), eq(plusFiles.storing, false), this.visible(v)));
    return row;
  }

  async fileContent(db: Executor, fileId: string): Promise<Buffer | undefined> {
    const [row] = await db.select({ content: plusFiles.content }).from(plusFiles).where(eq(plusFiles.id, fileId));
    return row?.content;
  }

  /** Delete a file with its chunks, taking them out of the entry's retrieval statistics, inside the caller's transaction. */
  async deleteFile(tx: Tx, fileId: string): Promise<void> {
    const stats = chunkVectorsOf([fileId]);
    const [file] = await tx
      .update(plusEntries)
      .set({ chunkCount: sql`greatest(0, ${plusEntries.chunkCount} - (select count(*) from ${plusChunks} where ${plusChunks.fileId} = ${fileId}))::int` })
      .where(
        sql`(${plusEntries.teamId}, ${plusEntries.id}) = (select ${plusFiles.teamId}, ${plusFiles.plusId} from ${plusFiles} where ${plusFiles.id} = ${fileId})`,
      )
      .returning({ teamId: plusEntries.teamId, plusId: plusEntries.id });
    if (file) {
      // rows that reach 0 go; the others lose the file's counts (disjoint rows, one statement)
      await execute(
        tx,
        sql`
        with s as (select word, ndoc from ts_stat(${stats})),
        gone as (
          delete from plus_terms t using s
          where t.team_id = ${file.teamId}::uuid and t.plus_id = ${file.plusId}::uuid and t.lexeme = s.word and t.df <= s.ndoc
        )
        update plus_terms t set df = t.df - s.ndoc
        from s
        where t.team_id = ${file.teamId}::uuid and t.plus_id = ${file.plusId}::uuid and t.lexeme = s.word and t.df > s.ndoc`,
      );
    }
    await tx.delete(plusFiles).where(eq(plusFiles.id, fileId));
  }

  /** Files linked to a thread through the chat's add-file that the viewer's turn may use, by the workspace's contextType (policy/context.ts). */
  async threadFiles(db: Executor, v: Viewer, threadId: string, contextType: ContextType): Promise<Array<{ id: string; plusId: string }>> {
    return db
      .select({ id: plusFiles.id, plusId: plusFiles.plusId })
      .from(plusFiles)
      .innerJoin(plusEntries, and(eq(plusEntries.teamId, plusFiles.teamId), eq(plusEntries.id, plusFiles.plusId)))
      .where(
        and(eq(plusFiles.threadId, threadId), eq(plusEntries.teamId, v.teamId), eq(plusFiles.storing, false), usableContextFilesSql(v, contextType, plusFiles)),
      );
  }

  /** Titles of entries whose files were added to the workspace's threads, for default greetings. */
  async titlesForWorkspace(db: Executor, v: Viewer, workspaceId: string): Promise<string[]> {
    const rows = await db
      .selectDistinct({ title: plusEntries.title })
      .from(plusEntries)
      .innerJoin(plusFiles, and(eq(plusFiles.teamId, plusEntries.teamId), eq(plusFiles.plusId, plusEntries.id)))
      .where(
        and(
          this.visible(v),
          eq(plusFiles.storing, false),
          sql`${plusFiles.threadId} in (select id from chat_threads where team_id = ${v.teamId} and workspace_id = ${workspaceId})`,
        ),
      )
      .limit(5);
    return rows.map((r) => r.title).filter((t): t is string => !!t);
  }
}
