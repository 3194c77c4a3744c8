import { and, eq, inArray, sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../../db/client.js';
import { chatImages, chatMessages, chatThreads } from '../../db/schema/chat.js';

/**
 * The SQL of messages' images (table chat_images, owner: chat). Their rows are written inside a
 * turn's own statements (repo.ts lends the fragment below), so an image is stored exactly when
 * its message is; they are read back by id for a prompt's history and for whoever may read the thread.
 */

/** One image to store with its message. */
export interface ImageRow {
  id: string;
  messageId: string;
  mimeType: string;
  width: number;
  height: number;
  /** the bytes, base64 (decoded by the database: a bytea parameter costs PGlite ~0.7 s a MB, a text one almost nothing) */
  base64: string;
  /** how many bytes that is */
  bytes: number;
  created: Date;
}

/**
 * `insert into chat_images …` of the rows, each with its turn's `key` (as repo.ts numbers turns):
 * only the rows whose key `keep` selects are written (null: all).
 */
export function insertImagesSql(rows: Array<{ key: number; row: ImageRow }>, keep: SQL | null): SQL {
  const values = rows.map(
    ({ key, row: r }) =>
      sql`(${key}::int, ${r.id}::uuid, ${r.messageId}::uuid, ${r.mimeType}::text, ${r.width}::int, ${r.height}::int, ${r.bytes}::int, decode(${r.base64}::text, 'base64'), ${r.created.toISOString()}::timestamptz)`,
  );
  return sql`insert into chat_images (id, message_id, mime_type, width, height, bytes, data, created)
    select v.id, v.message_id, v.mime_type, v.width, v.height, v.bytes, v.data, v.created
    from (values ${sql.join(values, sql`, `)}) as v(key, id, message_id, mime_type, width, height, bytes, data, created)
    ${keep ? sql`where v.key in (${keep})` : sql``}`;
}

export class ChatImagesRepo {
  /** The bytes of these images, base64, by id (a prompt's history sends them again). */
  async base64Of(db: Executor, ids: string[]): Promise<Map<string, string>> {
    if (ids.length === 0) return new Map();
    const rows = await db.select({ id: chatImages.id, data: chatImages.data }).from(chatImages).where(inArray(chatImages.id, ids));
    return new Map(rows.map((r) => [r.id, Buffer.from(r.data).toString('base64')]));
  }

  /** An image with the thread it belongs to (the caller then checks the thread is readable); undefined when none in this team. */
  async find(db: Executor, teamId: string, id: string) {
    const [row] = await db
      .select({ mimeType: chatImages.mimeType, data: chatImages.data, threadId: chatThreads.id, workspaceId: chatThreads.workspaceId })
      .from(chatImages)
      .innerJoin(chatMessages, eq(chatMessages.id, chatImages.messageId))
      .innerJoin(chatThreads, eq(chatThreads.id, chatMessages.threadId))
      .where(and(eq(chatImages.id, id), eq(chatThreads.teamId, teamId)));
    return row;
  }
}
