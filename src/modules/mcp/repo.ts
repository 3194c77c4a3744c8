import { and, asc, eq, inArray } from 'drizzle-orm';
import type { Executor } from '../../db/client.js';
import { mcpServers } from '../../db/schema/mcp.js';

export type McpServerRow = typeof mcpServers.$inferSelect;
export type McpServerInsert = typeof mcpServers.$inferInsert;

/** The `mcp_servers` table; every read is scoped to a team (another team's server is not found). */
export class McpRepo {
  async list(db: Executor, teamId: string): Promise<McpServerRow[]> {
    return db.select().from(mcpServers).where(eq(mcpServers.teamId, teamId)).orderBy(asc(mcpServers.created), asc(mcpServers.id));
  }

  async find(db: Executor, teamId: string, id: string): Promise<McpServerRow | undefined> {
    const [row] = await db
      .select()
      .from(mcpServers)
      .where(and(eq(mcpServers.teamId, teamId), eq(mcpServers.id, id)));
    return row;
  }

  /** Of these ids, the team's servers (any order). */
  async findMany(db: Executor, teamId: string, ids: string[]): Promise<McpServerRow[]> {
    if (ids.length === 0) return [];
    return db
      .select()
      .from(mcpServers)
      .where(and(eq(mcpServers.teamId, teamId), inArray(mcpServers.id, ids)));
  }

  async insert(db: Executor, v: McpServerInsert): Promise<McpServerRow> {
    const [row] = await db.insert(mcpServers).values(v).returning();
    return row!;
  }

  async update(db: Executor, teamId: string, id: string, v: Partial<McpServerInsert>): Promise<McpServerRow | undefined> {
    const [row] = await db
      .update(mcpServers)
      .set({ ...v, updated: new Date() })
      .where(and(eq(mcpServers.teamId, teamId), eq(mcpServers.id, id)))
      .returning();
    return row;
  }

  async delete(db: Executor, teamId: string, id: string): Promise<boolean> {
    const rows = await db
      .delete(mcpServers)
      .where(and(eq(mcpServers.teamId, teamId), eq(mcpServers.id, id)))
      .returning({ id: mcpServers.id });
    return rows.length > 0;
  }
}
