import { randomUUID } from 'node:crypto';
import type { Static } from 'typebox';
import type { Db } from '../../db/client.js';
import type { StoredSource } from '../../db/schema/chat.js';
import { AppError, badRequest, forbidden, idTaken, notFound, upstreamError } from '../../errors.js';
import type { IngestConfig } from '../../config.js';
import { IngestError, IngestPool, sanitizeFilename, type IngestPoolStats } from '../../ingest/index.js';
import { classifyProviderError, getAdapter } from '../../providers/index.js';
import type { ProviderTimeouts } from '../../providers/types.js';
import { planPack, renderPack, type PackOptions, type PackPlan } from '../../retrieval/pack.js';
import type { EntryIndex } from '../../retrieval/lexical-index/entry-index.js';
import type { LexicalIndexes } from '../../retrieval/lexical-index/indexes.js';
import { RetrievalRepo, type RankIn, type Ranking, type Retrieved, type ScoredChunk } from '../../retrieval/repo.js';
import type { ChunkScope, Question } from '../../retrieval/search-sql.js';
import type { UploadedFile } from '../../http/multipart.js';
import { fuseByRank } from '../../retrieval/fusion.js';
import { vectorSearch } from '../../retrieval/vector.js';
import type { EmbeddingsService } from '../embeddings/service.js';
import type { ModelsService } from '../models/service.js';
import { isTeamAdmin, type Principal } from '../teams/service.js';
import type { WorkspaceRow } from '../workspaces/repo.js';
import type { ContextForPromptResponse } from './schema.js';
import { PlusRepo, type NewFile, type PlusFileRow, type PlusRow, type Viewer } from './repo.js';

export const DEFAULT_CONTEXT_TOKENS = 2000;
const CANDIDATES = 50;
const EXCERPT_CHARS = 240;
const SUMMARY_INPUT_TOKENS = 6000;

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

const viewer = (p: Principal): Viewer => ({ teamId: p.teamId, userId: p.userId, admin: isTeamAdmin(p) });

export class PlusService {
  private readonly repo = new PlusRepo();
  private readonly retrieval = new RetrievalRepo();
  /** Uploaded files are parsed in worker threads, never on the event loop (src/ingest/pool.ts). */
  private readonly ingestPool: IngestPool;

  constructor(
    private readonly db: Db,
    private readonly models: ModelsService,
    private readonly timeouts: ProviderTimeouts,
    ingest: IngestConfig,
    private readonly embeddings: EmbeddingsService,
    /** in-memory lexical indexes of entries (null: every search ranks in SQL) */
    private readonly lexical: LexicalIndexes | null = null,
  ) {
    this.ingestPool = new IngestPool({ workers: ingest.workers, maxMemoryMb: ingest.workerMaxMemoryMb, timeoutMs: ingest.timeoutMs, limits: ingest });
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
    return (await this.repo.list(this.db, viewer(caller), showPublic)).map((e) => ({
      id: e.id,
      title: e.title,
      description: e.description,
      isPublic: e.isPublic,
    }));
  }

  async get(caller: Principal, id: string) {
    const entry = await this.repo.find(this.db, viewer(caller), id);
    if (!entry) throw notFound('Plus entry');
    return this.view(entry);
  }

  private async view(entry: PlusRow) {
    const files = await this.repo.filesOf(this.db, [entry.id]);
    const chunks = await this.repo.chunksOf(
      this.db,
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
        threadId: f.threadId,
        embedding: embedding.get(f.id) ?? null,
        fileChunks: chunks
          .filter((c) => c.fileId === f.id)
          .map((c) => ({ id: c.id, fileData: c.fileData, fileDataProcessed: c.fileDataProcessed, tokenSize: c.tokenSize })),
      })),
    };
  }

  async fileContent(caller: Principal, fileId: string): Promise<{ file: PlusFileRow; content: Buffer }> {
    const found = await this.repo.findFile(this.db, viewer(caller), fileId);
    if (!found) throw notFound('File');
    const content = await this.repo.fileContent(this.db, fileId);
    if (!content) throw notFound('File');
    return { file: found.file, content };
  }

  // ---- writing -------------------------------------------------------------------------

  private requireChange(caller: Principal, entry: PlusRow): void {
    if (entry.userId !== caller.userId && !isTeamAdmin(caller)) {
      throw forbidden('Only the creator of this Plus entry or a team owner/admin may change it');
    }
  }

  /** Parse every file before anything is stored: one bad file fails the request, naming it. */
  private async ingest(files: UploadedFile[], plusId: string, userId: number, threadId: string | null): Promise<NewFile[]> {
    const out: NewFile[] = [];
    const now = Date.now();
    for (const f of files) {
      const filename = sanitizeFilename(f.filename);
      let doc;
      try {
        doc = await this.ingestPool.ingest(new Uint8Array(f.bytes.buffer, f.bytes.byteOffset, f.bytes.byteLength), filename, f.declaredMime);
      } catch (err) {
        if (err instanceof IngestError) throw ingestProblem(err, filename);
        throw err;
      }
      out.push({
        id: randomUUID(),
        plusId,
        userId,
        threadId,
        filename,
        mimeType: doc.mimeType,
        content: f.bytes,
        text: doc.processed,
        tokenSize: doc.tokenSize,
        summary: null,
        // upload order is listing order (files of one request would otherwise tie on the timestamp)
        created: new Date(now + out.length),
        chunks: doc.chunks.map((c) => ({ idx: c.index, fileData: c.text, fileDataProcessed: c.processed, tokenSize: c.tokenSize, heading: c.heading })),
      });
    }
    return out;
  }

  /** Create an entry, or update one the caller may change (by `fields.id`) and add the files. */
  async save(caller: Principal, fields: PlusFields, files: UploadedFile[]) {
    const v = viewer(caller);
    const existing = fields.id ? await this.repo.find(this.db, v, fields.id) : undefined;
    if (fields.id && !existing && (await this.repo.exists(this.db, fields.id))) {
      // an entry the caller cannot see: as if it did not exist, but its id is taken
      throw idTaken('Plus entry');
    }
    if (existing) this.requireChange(caller, existing);
    const id = existing?.id ?? fields.id ?? randomUUID();
    const newFiles = await this.ingest(files, id, caller.userId, null);
    const changes = {
      ...(fields.context !== undefined ? { context: fields.context } : {}),
      ...(fields.title !== undefined ? { title: fields.title } : {}),
      ...(fields.description !== undefined ? { description: fields.description } : {}),
      ...(fields.isPublic !== undefined ? { isPublic: fields.isPublic } : {}),
    };
    await this.db.transaction(async (tx) => {
      if (existing) await this.repo.update(tx, id, changes);
      else await this.repo.insert(tx, { id, teamId: caller.teamId, userId: caller.userId, ...changes });
      await this.repo.insertFiles(tx, newFiles);
      await this.embeddings.enqueueFiles(
        tx,
        newFiles.map((f) => f.id),
      );
    });
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
    const entry = await this.repo.find(this.db, viewer(caller), plusId);
    if (!entry) throw notFound('Plus entry');
    this.requireChange(caller, entry);
    const newFiles = await this.ingest(files, plusId, caller.userId, opts.threadId);
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
    await this.db.transaction(async (tx) => {
      await this.repo.insertFiles(tx, newFiles);
      await this.embeddings.enqueueFiles(
        tx,
        newFiles.map((f) => f.id),
      );
      await this.repo.update(tx, plusId, {});
    });
    this.embeddings.kick();
    return this.view(entry);
  }

  async delete(caller: Principal, id: string): Promise<void> {
    const entry = await this.repo.find(this.db, viewer(caller), id);
    if (!entry) throw notFound('Plus entry');
    this.requireChange(caller, entry);
    await this.repo.delete(this.db, id);
  }

  async deleteFile(caller: Principal, fileId: string): Promise<void> {
    const found = await this.repo.findFile(this.db, viewer(caller), fileId);
    if (!found) throw notFound('File');
    this.requireChange(caller, found.entry);
    // one transaction with the entry's retrieval statistics (PlusRepo.deleteFile)
    await this.db.transaction((tx) => this.repo.deleteFile(tx, fileId));
  }

  // ---- retrieval -----------------------------------------------------------------------

  /**
   * Hybrid retrieval (docs/API.md, "Hybrid retrieval"): with the team's embedding model and
   * embedded chunks in scope, the full-text candidates fused by reciprocal rank with the nearest
   * chunks by vector (retrieval/fusion.ts). Without an embedding model — or before any chunk in
   * scope is embedded, or when the model cannot embed the question now — the full-text
   * candidates unchanged. Full-text's fallback to the opening chunks does not count as a ranking.
   */
  private async withVectors(teamId: string, scope: ChunkScope, question: string, lexical: Retrieved): Promise<ScoredChunk[]> {
    const q = await this.embeddings.queryVector(teamId, question);
    if (!q) return lexical.chunks;
    const near = await vectorSearch(this.db, scope, q, CANDIDATES, await this.embeddings.vectorOps());
    if (near.length === 0) return lexical.chunks;
    return fuseByRank(lexical.leading ? [] : lexical.chunks, near).slice(0, CANDIDATES);
  }

  /**
   * The lexical ranking of one entry: from its in-memory index when one is current (the entry
   * and the question's lexemes in one statement, then no other), else in SQL (the entry and the
   * question's term statistics in one statement, then the search); a missing or stale index is
   * (re)built in the background.
   */
  private async searchEntry(
    caller: Principal,
    plusId: string,
    question: string,
  ): Promise<{ entry: Pick<PlusRow, 'teamId' | 'context'>; retrieved: Retrieved }> {
    const scope = { plusIds: [plusId], fileIds: [] };
    if (this.lexical?.has(plusId)) {
      const found = await this.repo.findWithLexemes(this.db, viewer(caller), plusId, question);
      if (!found) throw notFound('Plus entry');
      const { entry, lexemes } = found;
      const index = this.lexical.current(plusId, entry.lexicalVersion);
      if (index && index.chunks === entry.chunkCount)
        return { entry, retrieved: await this.retrieval.searchIndexes(this.db, [index], entry.chunkCount, lexemes, CANDIDATES) };
      return { entry, retrieved: await this.retrieval.retrieve(this.db, scope, question, CANDIDATES) };
    }
    const found = await this.repo.findWithTerms(this.db, viewer(caller), plusId, question);
    if (!found) throw notFound('Plus entry');
    const { entry, terms, tokens } = found;
    this.lexical?.current(plusId, entry.lexicalVersion);
    return { entry, retrieved: await this.retrieval.retrieveWith(this.db, scope, { n: entry.chunkCount, tokens, terms }, CANDIDATES) };
  }

  /**
   * The lexical ranking over several entries and a thread's files: from the entries' in-memory
   * indexes when every one is current and no thread file is in scope, else in SQL.
   */
  private async searchScope(scope: ChunkScope, entries: PlusRow[], question: Question): Promise<Retrieved> {
    if (this.lexical && scope.fileIds.length === 0 && entries.length > 0) {
      const indexes = entries.map((e) => this.lexical!.current(e.id, e.lexicalVersion));
      if (indexes.every((i, k) => i && i.chunks === entries[k]!.chunkCount)) {
        const n = entries.reduce((t, e) => t + e.chunkCount, 0);
        return this.retrieval.searchIndexes(this.db, indexes as EntryIndex[], n, await this.retrieval.questionLexemes(this.db, question), CANDIDATES);
      }
    }
    return this.retrieval.retrieve(this.db, scope, question, CANDIDATES);
  }

  /**
   * What fits the budget, with the texts of the chunks used read (only those: the in-memory
   * index ranks without texts). A chunk deleted since the search is left out and the plan made
   * again without it.
   */
  private async pack(
    intro: Array<{ title: string | null; text: string }>,
    chunks: ScoredChunk[],
    budget: number,
    alsoRead: readonly ScoredChunk[] = [],
    opts: PackOptions = {},
  ): Promise<{ plan: PackPlan; chunks: ScoredChunk[] }> {
    let list = chunks;
    for (;;) {
      const plan = planPack(intro, list, budget, opts);
      const gone = await this.retrieval.hydrate(this.db, [...plan.used, ...alsoRead.filter((c) => list.includes(c))]);
      if (gone.size === 0) return { plan, chunks: list };
      list = list.filter((c) => !gone.has(c.chunkId));
    }
  }

  async contextForPrompt(
    caller: Principal,
    plusId: string,
    question: string,
    maxTokens = DEFAULT_CONTEXT_TOKENS,
    explain = false,
  ): Promise<Static<typeof ContextForPromptResponse>> {
    const { entry, retrieved } = await this.searchEntry(caller, plusId, question);
    const scope = { plusIds: [plusId], fileIds: [] };
    const ranked = await this.withVectors(entry.teamId, scope, question, retrieved);
    const { plan, chunks } = await this.pack([{ title: null, text: entry.context ?? '' }], ranked, maxTokens, explain ? ranked : []);
    const packed = renderPack(plan);
    if (!explain) return { content: packed.content };
    const used = new Set(packed.used.map((c) => c.chunkId));
    const choice = retrieved.choice;
    const dfOf = new Map(retrieved.stats.terms.map((t) => [t.lexeme, t.df]));
    return {
      content: packed.content,
      explain: {
        method: chunks.length === 0 ? 'none' : ranked !== retrieved.chunks ? 'hybrid' : retrieved.leading ? 'leading' : 'lexical',
        terms: (choice?.rank ?? []).map((lexeme, i) => ({ lexeme, df: dfOf.get(lexeme) ?? 0, idf: round6(choice!.idf[i]!), carried: choice!.carried[i]! })),
        results: chunks.map((c) => ({
          rank: c.rank,
          score: round6(c.score),
          ranking: roundRanking(c.ranking),
          chunkId: c.chunkId,
          fileId: c.fileId,
          filename: c.filename,
          heading: c.heading,
          tokenSize: c.tokenSize,
          used: used.has(c.chunkId),
          excerpt: excerptOf(c.text ?? ''),
        })),
      },
    };
  }

  async contextForTurn(
    caller: Principal,
    workspace: WorkspaceRow,
    q: { plusIds: string[]; threadId: string | null; query: string; carry?: string | null; budgetTokens: number; workspacePlusIds?: string[] },
  ): Promise<{ text: string; sources: StoredSource[] }> {
    const v = viewer(caller);
    // The request's entries must all be visible (else 404); the workspace's own are used when visible, skipped otherwise.
    const also = (q.workspacePlusIds ?? []).filter((id) => !q.plusIds.includes(id));
    const entries = await this.repo.findMany(this.db, v, [...q.plusIds, ...also]);
    if (entries.filter((e) => q.plusIds.includes(e.id)).length !== q.plusIds.length) throw notFound('Plus entry');
    const threadFiles = q.threadId
      ? await this.repo.threadFiles(this.db, caller.teamId, q.threadId, workspace.contextType === 'PRIVATE' ? caller.userId : undefined)
      : [];
    if (entries.length === 0 && threadFiles.length === 0) return { text: '', sources: [] };
    const scope = { plusIds: entries.map((e) => e.id), fileIds: threadFiles.map((f) => f.id) };
    const retrieved = await this.searchScope(scope, entries, { text: q.query, carry: q.carry ?? null });
    const ranked = await this.withVectors(caller.teamId, scope, q.query, retrieved);
    // The passages are numbered as the sources are listed, so that the answer can cite them.
    const { plan } = await this.pack(
      entries.map((e) => ({ title: e.title, text: e.context ?? '' })),
      ranked,
      q.budgetTokens,
      [],
      { numbered: true },
    );
    const packed = renderPack(plan);
    if (!packed.content) return { text: '', sources: [] };
    const cite = packed.used.length > 0 ? ' When you use a numbered passage, cite it by its number in square brackets, like [1].' : '';
    return {
      text: `Use the following context from the team's documents when it helps answer.${cite}\n\n${packed.content}`,
      sources: packed.used.map((c) => ({
        plusId: c.plusId,
        fileId: c.fileId,
        filename: c.filename,
        chunkId: c.chunkId,
        score: round6(c.score),
        excerpt: excerptOf(c.text ?? ''),
        rank: c.rank,
        ranking: roundRanking(c.ranking),
      })),
    };
  }

  /** Which of `ids` are entries the caller may see (a workspace's plusIds are checked with it). */
  async visibleIds(caller: Principal, ids: string[]): Promise<string[]> {
    return (await this.repo.findMany(this.db, viewer(caller), ids)).map((e) => e.id);
  }

  async titlesFor(caller: Principal, workspace: WorkspaceRow): Promise<string[]> {
    return this.repo.titlesForWorkspace(this.db, viewer(caller), workspace.id);
  }
}

const round6 = (x: number): number => Math.round(x * 1e6) / 1e6;
const excerptOf = (text: string): string => (text.length > EXCERPT_CHARS ? `${text.slice(0, EXCERPT_CHARS)}…` : text);
const roundIn = (r: RankIn | null): RankIn | null => r && { score: round6(r.score), rank: r.rank };
const roundRanking = (r: Ranking): Ranking => ({ lexical: roundIn(r.lexical), vector: roundIn(r.vector) });

function truncateTokens(chunks: NewFile['chunks'], budget: number): string {
  const out: string[] = [];
  let used = 0;
  for (const c of chunks) {
    if (used + c.tokenSize > budget) break;
    out.push(c.fileDataProcessed);
    used += c.tokenSize;
  }
  return out.join('\n\n') || (chunks[0]?.fileDataProcessed ?? '');
}
