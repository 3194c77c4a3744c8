import { randomUUID } from 'node:crypto';
import { TtlCache } from '../../cache.js';
import type { Db } from '../../db/client.js';
import { GroupCommit } from '../../db/group-commit.js';
import { notFound } from '../../errors.js';
import type { Principal } from '../../policy/index.js';
import type { BudgetHold } from '../usage/counters.js';
import type { UsageService } from '../usage/service.js';
import type { AnswerJournal } from './answer-journal.js';
import type { ChatImages } from './images.js';
import type { ImageRow } from './images-repo.js';
import { PromptLogsRepo } from '../prompt-logs/repo.js';
import { titleFrom } from './prompt.js';
import { ChatRepo, type AnswerRecord, type StoredAnswer, type StoredUserTurn, type UserTurnRecord } from './repo.js';
import type { Plan } from './turn-plan.js';
import { promptText } from './turn-records.js';
import type { TurnBranch } from './versions.js';

const EXCHANGE_TTL_MS = 10 * 60_000;
/** Answers replayed from the journal per statement at start-up. */
const REPLAY_BATCH = 50;
/** The log of a turn written whole whose journaled statement the database refused at start-up. */
const REFUSED_AT_START = 'internal: the answer was acknowledged, but the database refused to store it at the next start';

type WholeTurn = AnswerRecord & { turn: UserTurnRecord };
/** What a follow-up written whole reads before its call: statement 1's answer, and the leaf it attaches to. */
type FollowUpRead = NonNullable<StoredUserTurn> & { base: string | null };
const isWhole = (rec: AnswerRecord): rec is WholeTurn => rec.turn !== undefined;

/**
 * What a chat turn writes: statement 1 (the user's turn, the thread, the prompt log and the budget
 * reservation in one statement) and statement 2 (the answer, the ledger entry, the settlement),
 * each batched with other turns' statements (db/group-commit.ts), and the per-thread size of the
 * last exchange that statement 1's reservation counts. A turn that needs nothing back from
 * statement 1 (a follow-up: but its history, readFollowUp) and is answered in one piece defers
 * its user's turn (deferUserTurn) and is written whole, in one statement, with its answer. With a
 * journal (the embedded database on disk), an answer is acknowledged once its statement is
 * journaled and sent (storeAnswer).
 */
export class TurnStore {
  private readonly repo = new ChatRepo();
  private readonly logs = new PromptLogsRepo();
  private readonly userTurns = new GroupCommit<UserTurnRecord, StoredUserTurn>((items) => this.repo.recordUserTurns(this.db, items));
  private readonly answers = new GroupCommit<AnswerRecord, StoredAnswer>(
    (items) => this.repo.recordAnswers(this.db, items),
    undefined,
    (rec) => this.retry(rec),
  );
  /** turns written whole once answered (AnswerRecord.turn): one statement for the user's turn and its answer */
  private readonly wholeTurns = new GroupCommit<WholeTurn, StoredAnswer>(
    (items) => this.repo.recordWholeTurns(this.db, items),
    undefined,
    (rec) => this.retry(rec),
  );
  /** Per thread, the tokens of its last exchange (lastExchangeTokens); a thread's value changes only with its answers, stored here. */
  private readonly exchanges = new TtlCache<string, number>(EXCHANGE_TTL_MS);
  /** Journaled answers whose statement has not ended. */
  private readonly storing = new Set<Promise<void>>();

  constructor(
    private readonly db: Db,
    private readonly images: ChatImages,
    private readonly usage: Pick<UsageService, 'refusal'>,
    private readonly journal: AnswerJournal | null = null,
    /** a journaled answer's statement failed after the answer went out: reported, not thrown */
    private readonly onStoreFailure: (err: unknown) => void = () => {},
  ) {}

  /**
   * At start-up, before any request: store the answers an earlier process acknowledged but was
   * stopped before storing (those whose statement has not taken effect), then empty the journal.
   * Answers how many were stored, and the logs of those the database refused: a statement 2's log
   * stays pending (the sweep ends it `interrupted`); a turn written whole, which had no log yet,
   * gets its log written as failed, so that its provider call stays in the logs.
   */
  async replayJournal(): Promise<{ stored: number; refused: string[] }> {
    if (!this.journal) return { stored: 0, refused: [] };
    const left = this.journal.leftOver();
    const stored = await this.repo.storedAnswers(this.db, left);
    const todo = left.filter((r) => !stored.has(r.logId));
    const refused: AnswerRecord[] = [];
    for (const kind of [todo.filter(isWhole), todo.filter((r) => !isWhole(r))]) {
      for (let i = 0; i < kind.length; i += REPLAY_BATCH) {
        const batch = kind.slice(i, i + REPLAY_BATCH);
        // a batch that fails is stored one by one; an answer the database still refuses cannot hold up the start
        await this.writeNow(batch).catch(async () => {
          for (const rec of batch) await this.writeNow([rec]).catch(() => refused.push(rec));
        });
      }
    }
    // (with what was answered; if the database refuses that too, without it)
    for (const rec of refused.filter(isWhole))
      await this.logs
        .insertFinished(this.db, rec.turn.log, { ...rec.log, status: 'error', error: REFUSED_AT_START })
        .catch(() => this.logs.insertFailed(this.db, rec.turn.log, rec.log.latencyMs, REFUSED_AT_START))
        .catch(() => undefined);
    this.journal.empty();
    return { stored: todo.length - refused.length, refused: refused.map((r) => r.logId) };
  }

  /** Once every journaled answer in flight is stored (the app's close): the journal's file closed. */
  async closeJournal(): Promise<void> {
    await Promise.all(this.storing);
    this.journal?.close();
  }

  /** Statement 1; also answers the message the answer will follow (the turn's last, or a regenerate's stored question). */
  async storeUserTurn(
    caller: Principal,
    plan: Plan,
    logId: string,
    hold: BudgetHold | null,
    branch: TurnBranch | null,
  ): Promise<NonNullable<StoredUserTurn> & { questionId: string | null }> {
    const { record, questionId } = this.userTurnRecord(caller, plan, logId, hold, branch);
    const stored = await this.userTurns.add(record).catch(async (err: unknown) => {
      await hold?.release();
      // A budget or rate limit refused the reservation in the statement: the whole statement was undone.
      throw (hold?.inStatement && (await this.usage.refusal(caller, err))) || err;
    });
    if (!stored) {
      await hold?.release();
      throw notFound('Thread');
    }
    return { ...stored, questionId };
  }

  /**
   * Statement 1 left for later: the user's turn of a new or ephemeral thread, or of a follow-up,
   * with nothing to reserve in SQL, stored with its answer (the `turn` of storeAnswer's record).
   * What it answers is what statement 1 would have: for a new thread no history, no files, nothing
   * reserved; for a follow-up what readFollowUp read, where the turn then attaches.
   */
  deferUserTurn(
    caller: Principal,
    plan: Plan,
    logId: string,
    read: FollowUpRead | null = null,
  ): { turn: UserTurnRecord; stored: NonNullable<StoredUserTurn> & { questionId: string | null } } {
    const { record, questionId } = this.userTurnRecord(caller, plan, logId, null, read ? { parentId: read.base } : null);
    return { turn: record, stored: { history: read?.history ?? [], threadHasFiles: read?.threadHasFiles ?? false, reservedCredits: 0, questionId } };
  }

  /**
   * A follow-up written whole: its thread's history and files read before the call, nothing
   * written (ChatRepo.readFollowUp); a thread out of scope is a 404, as in statement 1.
   */
  async readFollowUp(plan: Plan): Promise<FollowUpRead> {
    const read = plan.historyScope ? await this.repo.readFollowUp(this.db, plan.historyScope, plan.threadId) : null;
    if (!read) throw notFound('Thread');
    return read;
  }

  /** `branch`: where the messages attach (a regenerate's or an edit's branch, or a follow-up's read leaf). */
  private userTurnRecord(
    caller: Principal,
    plan: Plan,
    logId: string,
    hold: BudgetHold | null,
    branch: { parentId: string | null; questionId?: string | null } | null,
  ): { record: UserTurnRecord; questionId: string | null } {
    const now = new Date();
    const firstUser = plan.newTurns.find((m) => m.role === 'user') ?? plan.newTurns[0]!;
    // A regenerate stores no message: its question is the stored one.
    const rows: ImageRow[] = [];
    const messages = branch?.questionId
      ? []
      : plan.newTurns.map((m, i) => {
          const id = randomUUID();
          const created = new Date(now.getTime() + i);
          const own = this.images.storedOf(m, id, created);
          rows.push(...own.rows);
          return { id, role: m.role, content: m.content, created, images: own.images };
        });
    const record: UserTurnRecord = {
      reservation: hold?.inStatement ?? null,
      thread: { id: plan.threadId, teamId: caller.teamId, workspaceId: plan.workspace.id, userId: caller.userId, title: titleFrom(firstUser.content) },
      existing: plan.historyScope,
      after: branch ? { parentId: branch.parentId } : null,
      messages,
      images: rows,
      store: plan.store,
      log: {
        id: logId,
        teamId: caller.teamId,
        userId: caller.userId,
        workspaceId: plan.workspace.id,
        threadId: plan.store ? plan.threadId : null,
        modelId: plan.model.id,
        modelName: plan.model.name,
        prompt: promptText(plan.newTurns.at(-1)!),
        created: now,
      },
      now,
    };
    return { record, questionId: branch?.questionId ?? messages.at(-1)?.id ?? null };
  }

  /**
   * What the thread's history adds to a follow-up's prompt at most — its last exchange (the
   * answered prompt + answer), as statement 1's reservation counts it (usageSql.reserve): asked
   * only by counters that reserve before statement 1; kept per thread, read once when unknown.
   */
  async lastExchangeTokens(threadId: string): Promise<number> {
    const hit = this.exchanges.get(threadId);
    if (hit !== undefined) return hit;
    const n = await this.repo.lastExchangeTokens(this.db, threadId);
    this.exchanges.set(threadId, n);
    return n;
  }

  /**
   * Statement 2: whether the answer was kept (false: its thread was deleted meanwhile). A write
   * that lost a race with a thread delete (FK violation) is retried once: the retry sees the
   * thread gone; a failed write that had taken effect anyway is not (`retry`). `journaled` (a
   * plain answer) with the journal: the answer is appended to it, and this resolves true once the
   * statement is sent — the embedded database runs its statements in the order they are sent,
   * so whatever the client asks next sees the answer. A thread deleted meanwhile then takes the
   * answer with it; its log says so.
   */
  async storeAnswer(rec: AnswerRecord, journaled = false): Promise<boolean> {
    const journal = this.journal;
    const line = journaled && journal ? journal.append(rec) : null;
    if (!journal || !line) return this.write(rec, undefined).then((r) => r.kept);
    let sent!: () => void;
    const wasSent = new Promise<void>((resolve) => (sent = resolve));
    const storing = this.write(rec, sent).then(
      () => journal.stored(),
      (err: unknown) => {
        journal.failed(line); // kept in the journal: the next start tries it again
        this.onStoreFailure(err);
        sent(); // (if it failed before it was sent)
      },
    );
    this.storing.add(storing);
    void storing.finally(() => this.storing.delete(storing));
    await wasSent;
    return true;
  }

  /** Through the group commit, which retries a failed statement's answers one by one (`retry`). */
  private write(rec: AnswerRecord, onSent: (() => void) | undefined): Promise<StoredAnswer> {
    return isWhole(rec) ? this.wholeTurns.add(rec, onSent) : this.answers.add(rec, onSent);
  }

  /**
   * An answer whose statement failed, written again alone — unless the statement took effect
   * anyway (its connection dropped as it committed): written twice, its own ids would refuse it
   * (and a budget settlement would count twice), and a stored answer would be answered as a
   * failure. Asked again after a failed retry: on PostgreSQL the first statement's commit may
   * still have been under way, its rows locked, when it was first asked.
   */
  private async retry(rec: AnswerRecord): Promise<StoredAnswer> {
    const stored = async () => (await this.repo.storedAnswers(this.db, [rec]).catch(() => null))?.get(rec.logId);
    const done = await stored();
    if (done) return done;
    try {
      return (await this.writeNow([rec]))[0]!;
    } catch (err) {
      const late = await stored();
      if (late) return late;
      throw err;
    }
  }

  /** Records of one kind (all whole turns, or none), in one statement outside the batches. */
  private writeNow(recs: AnswerRecord[]): Promise<StoredAnswer[]> {
    const whole = recs.filter(isWhole);
    return whole.length > 0 ? this.repo.recordWholeTurns(this.db, whole) : this.repo.recordAnswers(this.db, recs);
  }

  /** A stored answer's exchange (its prompt and answer tokens) is the thread's last one now. */
  exchangeStored(threadId: string, tokens: number): void {
    this.exchanges.set(threadId, tokens);
  }
}
