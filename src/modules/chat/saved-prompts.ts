/**
 * The prompt library (docs/API.md, "Prompt library"): prompts saved with a title, for the whole
 * team (owners/admins write them) or for one user, whose `{{name}}` variables the web app asks for
 * when a prompt is picked from the composer's `/` menu.
 */
import { randomUUID } from 'node:crypto';
import { and, asc, desc, eq } from 'drizzle-orm';
import type { Db, Executor } from '../../db/client.js';
import { savedPrompts } from '../../db/schema/chat.js';
import { forbidden, notFound } from '../../errors.js';
import { mayAddSavedPrompt, mayChangeSavedPrompt, readableSavedPromptsSql, type Principal, type Viewer } from '../../policy/index.js';

type Row = typeof savedPrompts.$inferSelect;

/** A prompt's variables: the names inside `{{…}}`, in order of first use. */
export function variablesOf(content: string): string[] {
  const names = [...content.matchAll(/\{\{\s*([^{}\s][^{}]{0,59}?)\s*\}\}/g)].map((m) => m[1]!);
  return [...new Set(names)];
}

function view(r: Row) {
  return {
    id: r.id,
    scope: r.scope,
    title: r.title,
    content: r.content,
    variables: variablesOf(r.content),
    userId: r.userId,
    created: r.created.toISOString(),
    updated: r.updated.toISOString(),
  };
}

class SavedPromptsRepo {
  /** The team's prompts and the user's own, team ones first, each by title. */
  async list(db: Executor, v: Viewer): Promise<Row[]> {
    return db
      .select()
      .from(savedPrompts)
      .where(readableSavedPromptsSql(v, savedPrompts))
      .orderBy(desc(savedPrompts.scope), asc(savedPrompts.title), asc(savedPrompts.id));
  }

  /** One the user sees (404 otherwise). */
  async find(db: Executor, v: Viewer, id: string): Promise<Row | undefined> {
    const [row] = await db
      .select()
      .from(savedPrompts)
      .where(and(eq(savedPrompts.id, id), readableSavedPromptsSql(v, savedPrompts)));
    return row;
  }

  async insert(db: Executor, row: typeof savedPrompts.$inferInsert): Promise<Row> {
    return (await db.insert(savedPrompts).values(row).returning())[0]!;
  }

  async update(db: Executor, id: string, set: { title?: string; content?: string }): Promise<Row> {
    return (
      await db
        .update(savedPrompts)
        .set({ ...set, updated: new Date() })
        .where(eq(savedPrompts.id, id))
        .returning()
    )[0]!;
  }

  async delete(db: Executor, id: string): Promise<void> {
    await db.delete(savedPrompts).where(eq(savedPrompts.id, id));
  }
}

export class SavedPromptsService {
  private readonly repo = new SavedPromptsRepo();

  constructor(private readonly db: Db) {}

  async list(caller: Principal) {
    return (await this.repo.list(this.db, caller)).map(view);
  }

  /** A personal prompt for anyone; a team prompt for a team owner/admin (403 otherwise). */
  async create(caller: Principal, body: { title: string; content: string; scope?: 'team' | 'personal' | undefined }) {
    const scope = body.scope ?? 'personal';
    if (!mayAddSavedPrompt(caller, scope)) throw forbidden('Only a team owner or admin may add a prompt for the whole team');
    const now = new Date();
    const row = await this.repo.insert(this.db, {
      id: randomUUID(),
      teamId: caller.teamId,
      userId: caller.userId,
      scope,
      title: body.title.trim(),
      content: body.content,
      created: now,
      updated: now,
    });
    return view(row);
  }

  async update(caller: Principal, id: string, body: { title?: string | undefined; content?: string | undefined }) {
    const row = await this.writable(caller, id);
    return view(
      await this.repo.update(this.db, row.id, {
        ...(body.title !== undefined ? { title: body.title.trim() } : {}),
        ...(body.content !== undefined ? { content: body.content } : {}),
      }),
    );
  }

  async delete(caller: Principal, id: string): Promise<void> {
    await this.repo.delete(this.db, (await this.writable(caller, id)).id);
  }

  /** One the caller may change: their own personal prompt; a team prompt for owners/admins (members: 403). */
  private async writable(caller: Principal, id: string): Promise<Row> {
    const row = await this.repo.find(this.db, caller, id);
    if (!row) throw notFound('Prompt');
    if (!mayChangeSavedPrompt(caller, row)) throw forbidden('Only a team owner or admin may change the team\u2019s prompts');
    return row;
  }
}
