import { changedFields, recordAudit } from '../audit/record.js';
import type { Db } from '../../db/client.js';
import { AppError, badRequest, forbidden, notFound } from '../../errors.js';
import { toPage } from '../../http/paging.js';
import type { UploadedFile } from '../../http/multipart.js';
import type { PlusService } from '../plus/service.js';
import { mayChangeThread, threadScope, type Principal } from '../../policy/index.js';
import type { WorkspacesService, WorkspaceWithModels } from '../workspaces/service.js';
import { defaultGreeting, defaultSamplePrompts } from './defaults.js';
import { snippetOf, unmark } from './highlight.js';
import type { ChatImages } from './images.js';
import { ChatRepo, type MessageRow, type ThreadWithCount } from './repo.js';
import { VersionsRepo, type Versions } from './versions.js';
import type { ChatSearchHitT, ChatSearchQueryT } from './schema.js';
import { ChatSearchRepo, searchTerms } from './search-repo.js';
import { exportChunks, type ExportFormat, type ExportMessage } from './export.js';
import { safeFilename } from '../../http/download.js';

/** Messages read per query while exporting a thread: bounds the memory one export holds. */
const EXPORT_PAGE = 100;

/** What the chat needs from Plus besides a turn's context (see turns.ts). */
export type ChatPlus = Pick<PlusService, 'titlesFor' | 'addFiles'>;

function threadView(t: ThreadWithCount) {
  return {
    id: t.id,
    workspaceId: t.workspaceId,
    title: t.title,
    userId: t.userId,
    created: t.created.toISOString(),
    updated: t.updated.toISOString(),
    messageCount: t.messageCount,
    pinned: t.pinned,
  };
}

function messageView(m: MessageRow & { versions: Versions }) {
  return {
    id: m.id,
    role: m.role,
    content: m.content,
    modelId: m.modelId,
    created: m.created.toISOString(),
    usage: m.usage ?? null,
    sources: m.sources ?? [],
    status: m.status,
    error: m.error ?? null,
    ...(m.toolCalls?.length ? { toolCalls: m.toolCalls } : {}),
    versions: m.versions,
    ...(m.images && m.images.length > 0 ? { images: m.images } : {}),
  };
}

/** Threads (history), greeting and sample prompts, and files added from a chat. A turn itself: turns.ts. */
export class ChatService {
  private readonly repo = new ChatRepo();
  private readonly searchRepo = new ChatSearchRepo();
  private readonly versions = new VersionsRepo();

  constructor(
    private readonly db: Db,
    private readonly workspaces: WorkspacesService,
    private readonly plus: ChatPlus,
    private readonly images: Pick<ChatImages, 'find'>,
  ) {}

  /** An image of a message, for whoever may read its thread (404 otherwise, as for a missing one). */
  async image(caller: Principal, id: string): Promise<{ mimeType: string; data: Buffer }> {
    const found = await this.images.find(caller.teamId, id);
    if (!found) throw notFound('Image');
    await this.loadThread(caller, found.workspaceId, found.threadId).catch((err: unknown) => {
      throw err instanceof AppError && err.kind === 'not_found' ? notFound('Image') : err;
    });
    return { mimeType: found.mimeType, data: found.data };
  }

  // ---- threads -------------------------------------------------------------------------

  /** A thread the caller may see in a workspace they may see; 404 otherwise. */
  async loadThread(caller: Principal, workspaceId: string, threadId: string) {
    const { row: ws } = await this.workspaces.load(caller, workspaceId);
    const thread = await this.repo.findThread(this.db, threadScope(caller, ws), threadId);
    if (!thread) throw notFound('Thread');
    return { ws, thread };
  }

  /**
   * The chat's add-file: files into a Plus entry, linked to a thread when `threadId` is given
   * (the caller must see the thread; later turns of it search the files).
   */
  async addFiles(caller: Principal, plusId: string, files: UploadedFile[], opts: { threadId?: string; models?: string[]; summarize: boolean }) {
    if (opts.threadId) {
      const row = await this.repo.findThreadInTeam(this.db, caller.teamId, opts.threadId);
      if (!row) throw notFound('Thread');
      await this.loadThread(caller, row.workspaceId, opts.threadId);
    }
    return this.plus.addFiles(caller, plusId, files, { threadId: opts.threadId ?? null, summarizeWith: opts.summarize ? (opts.models ?? []) : null });
  }

  async listThreads(caller: Principal, workspaceId: string) {
    const { row: ws } = await this.workspaces.load(caller, workspaceId);
    return (await this.repo.listThreads(this.db, threadScope(caller, ws))).map(threadView);
  }

  /**
   * A thread with the messages of its active path (versions.ts): all of them, or one page (`limit`,
   * `before`: paging back from the newest).
   */
  async getThread(caller: Principal, workspaceId: string, threadId: string, page: { before?: string | undefined; limit?: number | undefined } = {}) {
    const { thread } = await this.loadThread(caller, workspaceId, threadId);
    const whole = page.before === undefined && page.limit === undefined;
    const found = await this.versions.pathPage(this.db, thread.id, page.before ?? null, page.limit ?? Number.MAX_SAFE_INTEGER);
    if (!found) throw notFound('Message');
    return { ...threadView(thread), messages: found.rows.map(messageView), ...(whole ? {} : { hasEarlier: found.hasEarlier }) };
  }

  /** A message's versions, oldest first (each an id to make active). */
  async versionsOf(caller: Principal, workspaceId: string, threadId: string, messageId: string) {
    const { thread } = await this.loadThread(caller, workspaceId, threadId);
    const found = await this.versions.versionsOf(this.db, thread.id, messageId);
    if (!found) throw notFound('Message');
    return found.map((v) => ({ id: v.id, created: v.created.toISOString() }));
  }

  /**
   * Makes the path through one of the thread's messages active (any version of a question or an
   * answer): whoever reads the thread may, as they may continue it. Answers the thread as it now reads.
   */
  async setActive(caller: Principal, workspaceId: string, threadId: string, messageId: string) {
    const { thread } = await this.loadThread(caller, workspaceId, threadId);
    if (!(await this.versions.activate(this.db, thread.id, messageId))) throw notFound('Message');
    return this.getThread(caller, workspaceId, threadId);
  }

  /**
   * A thread as a file, for whoever may read it (404 otherwise, checked before anything is
   * written): its name, and its text in chunks, reading the messages one page at a time.
   */
  async exportThread(caller: Principal, workspaceId: string, threadId: string, format: ExportFormat) {
    const { thread } = await this.loadThread(caller, workspaceId, threadId);
    await recordAudit(this.db, { action: 'export.thread', actor: caller, target: { type: 'thread', id: thread.id }, details: { workspaceId, format } });
    const { db, versions } = this;
    // the active path's ids (small), then its messages a page at a time
    const ids = await versions.pathIds(db, thread.id);
    async function* pages(): AsyncGenerator<ExportMessage[]> {
      for (let i = 0; i < ids.length; i += EXPORT_PAGE) {
        const page = ids.slice(i, i + EXPORT_PAGE);
        const byId = new Map((await versions.withModelNames(db, page)).map((m) => [m.id, m]));
        yield page.flatMap((id) => byId.get(id) ?? []);
      }
    }
    return { filename: safeFilename(thread.title, format, 'chat'), chunks: exportChunks(thread, pages(), format) };
  }

  private requireOwnOrAdmin(caller: Principal, thread: ThreadWithCount): void {
    if (!mayChangeThread(caller, thread)) {
      throw forbidden('Only the user who started this thread or a team owner/admin may change it');
    }
  }

  async renameThread(caller: Principal, workspaceId: string, threadId: string, title: string) {
    return this.updateThread(caller, workspaceId, threadId, { title });
  }

  /** Rename and/or pin a thread (who may delete it may change it); a pinned thread outlives the team's retention. */
  async updateThread(caller: Principal, workspaceId: string, threadId: string, change: { title?: string | undefined; pinned?: boolean | undefined }) {
    const { thread } = await this.loadThread(caller, workspaceId, threadId);
    this.requireOwnOrAdmin(caller, thread);
    await this.db.transaction(async (tx) => {
      if (change.title !== undefined) await this.repo.renameThread(tx, thread.id, change.title.trim() || thread.title);
      if (change.pinned !== undefined) await this.repo.setPinned(tx, thread.id, change.pinned);
      await recordAudit(tx, {
        action: 'thread.update',
        actor: caller,
        target: { type: 'thread', id: thread.id },
        details: { workspaceId, fields: changedFields(change), ...(change.pinned !== undefined ? { pinned: change.pinned } : {}) },
      });
    });
    return this.getThread(caller, workspaceId, threadId);
  }

  async deleteThread(caller: Principal, workspaceId: string, threadId: string): Promise<void> {
    const { thread } = await this.loadThread(caller, workspaceId, threadId);
    this.requireOwnOrAdmin(caller, thread);
    await this.repo.deleteThreads(this.db, [thread.id]);
  }

  /** Deletes the visible threads the caller owns (all visible ones for a team owner/admin). */
  async deleteHistory(caller: Principal, workspaceId: string): Promise<number> {
    const { row: ws } = await this.workspaces.load(caller, workspaceId);
    const threads = await this.repo.listThreads(this.db, threadScope(caller, ws));
    const mine = threads.filter((t) => mayChangeThread(caller, t));
    return this.repo.deleteThreads(
      this.db,
      mine.map((t) => t.id),
    );
  }

  /** Conversation search over the threads the caller reads (docs/API.md, "Conversation search"). */
  async search(caller: Principal, query: ChatSearchQueryT) {
    if (query.q.trim() === '')
      throw badRequest('validation_failed', 'q must contain a word to search for', [{ path: 'querystring/q', message: 'must not be blank' }]);
    // A workspace the caller cannot see is a 404, as on every workspace route.
    if (query.workspaceId) await this.workspaces.load(caller, query.workspaceId);
    const terms = searchTerms(query.q);
    const req = { page: query.page, size: query.size };
    if (!terms) return toPage<ChatSearchHitT>([], 0, req);
    const { rows, total } = await this.searchRepo.search(this.db, caller, terms, query.workspaceId ?? null, req);
    const content = rows.map((r): ChatSearchHitT => {
      const title = unmark(r.markedTitle);
      const snippet = snippetOf(r.markedSnippet, r.cutStart, r.cutEnd);
      return {
        threadId: r.threadId,
        workspaceId: r.workspaceId,
        messageId: r.messageId,
        title: title.text,
        snippet: snippet.text,
        highlights: snippet.highlights,
        titleHighlights: title.highlights,
        created: new Date(r.createdMs).toISOString(),
      };
    });
    return toPage(content, total, req);
  }

  // ---- greeting and sample prompts -----------------------------------------------------

  private async facts(caller: Principal, w: WorkspaceWithModels) {
    const first = w.models[0];
    return {
      name: w.row.name,
      modelNames: w.models.map((m) => m.modelName),
      systemInstructions: first?.systemInstructions ?? null,
      contextTitles: await this.plus.titlesFor(caller, w.row),
    };
  }

  async greeting(caller: Principal, workspaceId: string): Promise<{ content: string }> {
    const w = await this.workspaces.load(caller, workspaceId);
    if (w.row.greeting?.trim()) return { content: w.row.greeting };
    return { content: defaultGreeting(await this.facts(caller, w)) };
  }

  async samplePrompts(caller: Principal, workspaceId: string, limit: number): Promise<Array<{ content: string }>> {
    const w = await this.workspaces.load(caller, workspaceId);
    const own = w.row.samplePrompts ?? [];
    const prompts = own.length > 0 ? own : defaultSamplePrompts(await this.facts(caller, w));
    return prompts.slice(0, limit).map((content) => ({ content }));
  }
}
