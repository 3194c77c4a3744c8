import { changedFields, recordAudit } from '../audit/record.js';
import { randomUUID } from 'node:crypto';
import type { Static } from 'typebox';
import type { Db } from '../../db/client.js';
import type { StoredSource } from '../../db/schema/chat.js';
import { AppError, badRequest, idTaken, notFound, upstreamError } from '../../errors.js';
import type { IngestConfig } from '../../config.js';
import { ChunkReader, IngestError, IngestPool, sanitizeFilename, type IngestPoolStats } from '../../ingest/index.js';
import { classifyProviderError, getAdapter } from '../../providers/index.js';
import type { ProviderTimeouts } from '../../providers/types.js';
import type { LexicalIndexes } from '../../retrieval/lexical-index/indexes.js';
import type { UploadedFile } from '../../http/multipart.js';
import type { EmbeddingsService } from '../embeddings/service.js';
import type { ModelsService } from '../models/service.js';
import { requireChangePlus, type Principal } from '../../policy/index.js';
import type { WorkspaceRow } from '../workspaces/repo.js';
import type { ContextForPromptResponse } from './schema.js';
import { PlusContext, type TurnQuery } from './context.js';
import { EvaluationService } from './evaluation.js';
import { PlusRepo, type NewFile, type PlusFileRow, type PlusRow } from './repo.js';
import { storeFiles, sweepUnfinished } from './store.js';

const SUMMARY_INPUT_TOKENS = 6000;
/** An upload still storing this long after it began has stopped (storing the largest file takes well under a minute). */
const UNFINISHED_AFTER_MS = 3_600_000;
/** How often each node looks for them. */
export const UPLOAD_SWEEP_EVERY_MS = 600_000;

export interface PlusFields {
  id?: string;
  context?: string;
  title?: string;
  description?: string;
  isPublic?: boolean;
}

const INGEST_PROBLEMS = {
  unsupported_type: ['unsupported_media_type', 'unsupported_file_type'],
  corrupt: ['bad_request', 'corrupt_file'],
  too_large: ['too_large', 'file_over_ingest_limit'],
} as const;

function ingestProblem(err: IngestError, filename: string): AppError {
  const [kind, code] = INGEST_PROBLEMS[err.kind];
  return new AppError(kind, code, err.message, [{ path: `files/${filename}`, message: err.message }]);
}

/** A file of an upload being read by OCR (PlusService.reading). */
interface Reading {
  filename: string;
  pages: number;
  pagesRead: number;
}

export class PlusService {
  private readonly repo = new PlusRepo();
  private readonly context: PlusContext;
  /** Entries' evaluation sets (modules/plus/evaluation.ts). */
  readonly evaluation: EvaluationService;
  /** Uploaded files are parsed in worker threads, never on the event loop (src/ingest/pool.ts). */
  private readonly ingestPool: IngestPool;
  /** Files of uploads in progress being read by OCR, by entry (this node's; gone with the upload). */
  private readonly reading = new Map<string, Set<Reading>>();

  constructor(
    private readonly db: Db,
    private readonly models: ModelsService,
    private readonly timeouts: ProviderTimeouts,
    ingest: IngestConfig,
    private readonly embeddings: EmbeddingsService,
    /** in-memory lexical indexes of entries (null: every search ranks in SQL) */
    private readonly lexical: LexicalIndexes | null = null,
    /** the database for bulk work (Database.bulk): uploads' chunk batches, an entry's chunks read back, large searches' feature reads */
    private readonly bulk: Db = db,
  ) {
    this.context = new PlusContext(db, this.repo, embeddings, lexical, bulk);
    this.evaluation = new EvaluationService(db, this.repo, this.context);
    this.ingestPool = new IngestPool({
      workers: ingest.workers,
      maxMemoryMb: ingest.workerMaxMemoryMb,
      timeoutMs: ingest.timeoutMs,
      ocrTimeoutMs: ingest.ocrTimeoutMs,
      limits: ingest,
    });
  }

  /** A failed store's error, or not-found when the entry was deleted meanwhile (the upload's files went with it). */
  private async unlessGone(teamId: string, plusId: string, err: unknown): Promise<unknown> {
    if (err instanceof AppError) return err;
    return (await this.repo.exists(this.db, teamId, plusId).catch(() => true)) ? err : notFound('Plus entry');
  }

  /** Delete what uploads left unfinished (a crash, a stopped node): files still storing an hour after they began. */
  sweepUnfinished(): Promise<number> {
    return sweepUnfinished(this.db, UNFINISHED_AFTER_MS);
  }

  /** Stop the ingestion workers and index builds (app close). */
  async close(): Promise<void> {
    await Promise.all([this.ingestPool.close(), this.lexical?.close()]);
  }

  /** The in-memory lexical indexes (null: off): their size, and `idle()` for tests and benchmarks. */
  get lexicalIndexes(): LexicalIndexes | null {
    return this.lexical;
  }

  ingestStats(): IngestPoolStats {
    return this.ingestPool.stats();
  }

  // ---- reading -------------------------------------------------------------------------

  async list(caller: Principal, showPublic: boolean) {
    return (await this.repo.list(this.db, caller, showPublic)).map((e) => ({
      id: e.id,
      title: e.title,
      description: e.description,
      isPublic: e.isPublic,
    }));
  }

  async get(caller: Principal, id: string) {
    const entry = await this.repo.find(this.db, caller, id);
    if (!entry) throw notFound('Plus entry');
    return this.view(entry);
  }

  private async view(entry: PlusRow) {
    const files = await this.repo.filesOf(this.db, entry.teamId, [entry.id]);
    // every chunk of every file, a page per statement: bulk work, which gives way to other requests'
    const chunks = await this.repo.chunksOf(
      this.bulk,
      files.map((f) => f.id),
    );
    const embedding = await this.embeddings.statuses(
      entry.teamId,
      files.map((f) => f.id),
    );
    return {
      id: entry.id,
      context: entry.context,
      title: entry.title,
      description: entry.description,
      isPublic: entry.isPublic,
      created: entry.created.toISOString(),
      userId: entry.userId,
      files: files.map((f) => ({
        id: f.id,
        filename: f.filename,
        mimeType: f.mimeType,
        tokenSize: f.tokenSize,
        bytes: f.bytes,
        created: f.created.toISOString(),
        summary: f.summary,
        ocr: f.ocr,
        threadId: f.threadId,
        embedding: embedding.get(f.id) ?? null,
        fileChunks: chunks
          .filter((c) => c.fileId === f.id)
          .map((c) => ({ id: c.id, fileData: c.fileData, fileDataProcessed: c.fileDataProcessed, tokenSize: c.tokenSize })),
      })),
    };
  }

  /** The files of uploads to a visible entry being read by OCR now, with their pages read. */
  async readingNow(caller: Principal, plusId: string): Promise<{ files: Reading[] }> {
    const entry = await this.repo.find(this.db, caller, plusId);
    if (!entry) throw notFound('Plus entry');
    return { files: [...(this.reading.get(`${caller.teamId}/${plusId}`) ?? [])].map((r) => ({ ...r })) };
  }

  async fileContent(caller: Principal, fileId: string): Promise<{ file: PlusFileRow; content: Buffer }> {
    const found = await this.repo.findFile(this.db, caller, fileId);
    if (!found) throw notFound('File');
    const content = await this.repo.fileContent(this.db, fileId);
    if (!content) throw notFound('File');
    return { file: found.file, content };
  }

  // ---- writing -------------------------------------------------------------------------

  /** Parse every file before anything is stored: one bad file fails the request, naming it. */
  private async ingest(files: UploadedFile[], teamId: string, plusId: string, userId: number, threadId: string | null): Promise<NewFile[]> {
    const readingKey = `${teamId}/${plusId}`;
    const out: NewFile[] = [];
    const now = Date.now();
    for (const f of files) {
      const filename = sanitizeFilename(f.filename);
      let doc;
      const reading: Reading = { filename, pages: 0, pagesRead: 0 };
      const onOcr = ({ pages, pagesRead }: { pages: number; pagesRead: number }): void => {
        Object.assign(reading, { pages, pagesRead });
        const files = this.reading.get(readingKey) ?? new Set();
        this.reading.set(readingKey, files.add(reading));
      };
      try {
        doc = await this.ingestPool.ingest(new Uint8Array(f.bytes.buffer, f.bytes.byteOffset, f.bytes.byteLength), filename, f.declaredMime, onOcr);
      } catch (err) {
        if (err instanceof IngestError) throw ingestProblem(err, filename);
        throw err;
      } finally {
        const files = this.reading.get(readingKey);
        files?.delete(reading);
        if (files?.size === 0) this.reading.delete(readingKey);
      }
      out.push({
        id: randomUUID(),
        teamId,
        plusId,
        userId,
        threadId,
        filename,
        mimeType: doc.mimeType,
        content: f.bytes,
        tokenSize: doc.tokenSize,
        summary: null,
        ocr: doc.ocr,
        // upload order is listing order (files of one request would otherwise tie on the timestamp)
        created: new Date(now + out.length),
        chunks: new ChunkReader(doc.chunks),
      });
    }
    return out;
  }

  /** Create an entry, or update one the caller may change (by `fields.id`) and add the files. */
  async save(caller: Principal, fields: PlusFields, files: UploadedFile[]) {
    const v = caller;
    const existing = fields.id ? await this.repo.find(this.db, v, fields.id) : undefined;
    if (fields.id && !existing && (await this.repo.exists(this.db, caller.teamId, fields.id))) {
      // a teammate's entry the caller cannot see: its id is taken in the team (ids are per team,
      // so another team's entry of this id is no concern: this one is created beside it)
      throw idTaken('Plus entry');
    }
    if (existing) requireChangePlus(caller, existing);
    const id = existing?.id ?? fields.id ?? randomUUID();
    const newFiles = await this.ingest(files, caller.teamId, id, caller.userId, null);
    const changes = {
      ...(fields.context !== undefined ? { context: fields.context } : {}),
      ...(fields.title !== undefined ? { title: fields.title } : {}),
      ...(fields.description !== undefined ? { description: fields.description } : {}),
      ...(fields.isPublic !== undefined ? { isPublic: fields.isPublic } : {}),
    };
    try {
      await storeFiles(this.bulk, newFiles, {
        first: async (tx) => {
          if (existing) await this.repo.update(tx, caller.teamId, id, changes);
          else await this.repo.insert(tx, { id, teamId: caller.teamId, userId: caller.userId, ...changes });
        },
        last: async (tx) => {
          await this.embeddings.enqueueFiles(
            tx,
            newFiles.map((f) => f.id),
          );
          await recordAudit(tx, {
            action: existing ? 'plus.update' : 'plus.create',
            actor: caller,
            target: { type: 'plus', id },
            details: { fields: changedFields(changes), filesAdded: newFiles.length },
          });
        },
        // the entry this request created goes with its files: nothing of a failed upload stays
        // (only once created here: a failed insert must not take a concurrent request's entry)
        ...(existing ? {} : { undo: (db) => this.repo.delete(db, caller.teamId, id) }),
      });
    } catch (err) {
      throw existing ? await this.unlessGone(caller.teamId, id, err) : err;
    }
    if (newFiles.length > 0) this.embeddings.kick();
    return this.get(caller, id);
  }

  /**
   * Files into an existing entry (the Plus add-file, and the chat's, which ChatService calls after
   * checking the thread): with `threadId` they are linked to that thread so its later turns draw
   * on them; with `summarizeWith`, its first model writes a summary of each file.
   */
  async addFiles(
    caller: Principal,
    plusId: string,
    files: UploadedFile[],
    opts: { threadId: string | null; summarizeWith: string[] | null } = { threadId: null, summarizeWith: null },
  ) {
    if (files.length === 0) throw badRequest('validation_failed', 'Send at least one file', [{ path: 'files', message: 'is required' }]);
    const entry = await this.repo.find(this.db, caller, plusId);
    if (!entry) throw notFound('Plus entry');
    requireChangePlus(caller, entry);
    const newFiles = await this.ingest(files, caller.teamId, plusId, caller.userId, opts.threadId);
    if (opts.summarizeWith) {
      const modelId = opts.summarizeWith[0];
      if (!modelId)
        throw badRequest('validation_failed', 'summarize=true needs a model in models', [
          { path: 'querystring/models', message: 'is required with summarize' },
        ]);
      const model = await this.models.findUsable(caller.teamId, modelId);
      if (!model)
        throw badRequest('model_not_available', 'That model is not available to this team', [
          { path: 'querystring/models/0', message: 'is not a model this team uses' },
        ]);
      this.models.assertKind(model, 'chat', 'querystring/models/0');
      const { target } = await this.models.resolve(model);
      const adapter = getAdapter(target.apiBase, target.connectionType);
      for (const f of newFiles) {
        const excerpt = truncateTokens(f.chunks, SUMMARY_INPUT_TOKENS);
        try {
          const r = await adapter.complete({
            target,
            timeouts: this.timeouts,
            params: { maxTokens: 400 },
            messages: [
              { role: 'system', content: 'You summarise documents for a team knowledge base. Write a faithful summary of at most 150 words.' },
              { role: 'user', content: `Summarise the document "${f.filename}":\n\n${excerpt}` },
            ],
          });
          f.summary = r.content.trim();
        } catch (err) {
          throw upstreamError(classifyProviderError(err));
        }
      }
    }
    await storeFiles(this.bulk, newFiles, {
      first: async () => {},
      last: async (tx) => {
        await this.embeddings.enqueueFiles(
          tx,
          newFiles.map((f) => f.id),
        );
        await this.repo.update(tx, caller.teamId, plusId, {});
        await recordAudit(tx, { action: 'plus.update', actor: caller, target: { type: 'plus', id: plusId }, details: { filesAdded: newFiles.length } });
      },
    }).catch(async (err: unknown) => {
      throw await this.unlessGone(caller.teamId, plusId, err);
    });
    this.embeddings.kick();
    return this.view(entry);
  }

  async delete(caller: Principal, id: string): Promise<void> {
    const entry = await this.repo.find(this.db, caller, id);
    if (!entry) throw notFound('Plus entry');
    requireChangePlus(caller, entry);
    await this.db.transaction(async (tx) => {
      await this.repo.delete(tx, caller.teamId, id);
      await recordAudit(tx, { action: 'plus.delete', actor: caller, target: { type: 'plus', id } });
    });
  }

  async deleteFile(caller: Principal, fileId: string): Promise<void> {
    const found = await this.repo.findFile(this.db, caller, fileId);
    if (!found) throw notFound('File');
    requireChangePlus(caller, found.entry);
    // one transaction with the entry's retrieval statistics (PlusRepo.deleteFile)
    await this.db.transaction(async (tx) => {
      await this.repo.deleteFile(tx, fileId);
      await recordAudit(tx, { action: 'plus.update', actor: caller, target: { type: 'plus', id: found.entry.id }, details: { fileDeleted: fileId } });
    });
  }

  // ---- context for a question (context.ts) -------------------------------------------

  async contextForPrompt(
    caller: Principal,
    plusId: string,
    question: string,
    maxTokens?: number,
    explain = false,
  ): Promise<Static<typeof ContextForPromptResponse>> {
    return this.context.forPrompt(caller, plusId, question, maxTokens, explain);
  }

  contextForTurn(caller: Principal, workspace: WorkspaceRow, q: TurnQuery): Promise<{ text: string; sources: StoredSource[] }> {
    return this.context.forTurn(caller, workspace, q);
  }

  /** Which of `ids` are entries the caller may see (a workspace's plusIds are checked with it). */
  async visibleIds(caller: Principal, ids: string[]): Promise<string[]> {
    return (await this.repo.findMany(this.db, caller, ids)).map((e) => e.id);
  }

  /** Which of `ids` are public entries of the team (a shared thread names only their files). */
  async publicIds(teamId: string, ids: string[]): Promise<string[]> {
    return this.repo.publicIds(this.db, teamId, ids);
  }

  async titlesFor(caller: Principal, workspace: WorkspaceRow): Promise<string[]> {
    return this.repo.titlesForWorkspace(this.db, caller, workspace.id);
  }
}

function truncateTokens(chunks: NewFile['chunks'], budget: number): string {
  const out: string[] = [];
  let used = 0;
  for (let i = 0; i < chunks.length; i++) {
    const c = chunks.at(i)!;
    if (used + c.tokenSize > budget) break;
    out.push(c.fileDataProcessed);
    used += c.tokenSize;
  }
  return out.join('\n\n') || (chunks.at(0)?.fileDataProcessed ?? '');
}
