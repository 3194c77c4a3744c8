import { closeSync, fstatSync, ftruncateSync, openSync, readFileSync, writeSync } from 'node:fs';
import { answerJournalFile } from '../../db/files.js';
import type { AnswerRecord } from './repo.js';

/** Past this size the journal takes no more answers until its answers in flight are stored and it is emptied. */
const MAX_BYTES = 16 * 1024 * 1024;

/**
 * The embedded database's answer journal (`DATA_DIR/answers.journal`): statement 2 of a turn (or
 * the one statement of a turn written whole, its user's turn with it) is appended here, one JSON
 * line, before the answer is acknowledged, and the line is forgotten once the statement has
 * committed. A process killed in between leaves the line, and the next start
 * stores it (TurnStore.replayJournal) before anything else runs. A `write` to the file is in the
 * operating system's hands when it returns, as PGlite's own writes are (neither is flushed to
 * the disk), so it survives the process being killed just as the database does.
 *
 * The file is emptied whenever no answer is in flight; while answers keep arriving it grows, up
 * to MAX_BYTES, after which answers wait for their statement again (`append` refuses) until it
 * can be emptied. Lines of answers already stored may be replayed: replaying stores only what
 * the database does not have. An answer whose statement failed after it was acknowledged
 * (`failed`) keeps its line across the emptying, for the next start to try again.
 */
export class AnswerJournal {
  private readonly fd: number;
  private inFlight = 0;
  private bytes: number;
  private closed = false;
  /** lines of acknowledged answers whose statement failed: written back after each emptying */
  private readonly kept: Buffer[] = [];

  private constructor(readonly file: string) {
    this.fd = openSync(file, 'a+', 0o600);
    this.bytes = fstatSync(this.fd).size;
  }

  /** The journal of the embedded database in `dataDir`. */
  static open(dataDir: string): AnswerJournal {
    return new AnswerJournal(answerJournalFile(dataDir));
  }

  /** The answers left by an earlier process; a last line cut short (its write never returned, so never acknowledged) is skipped. */
  leftOver(): AnswerRecord[] {
    const out: AnswerRecord[] = [];
    for (const line of readFileSync(this.file, 'utf8').split('\n')) {
      if (!line) continue;
      let rec: AnswerRecord;
      try {
        rec = JSON.parse(line) as AnswerRecord;
      } catch {
        continue;
      }
      rec.now = new Date(rec.now);
      rec.ledger.created = new Date(rec.ledger.created);
      const turn = rec.turn;
      if (turn) {
        turn.now = new Date(turn.now);
        turn.log.created = new Date(turn.log.created);
        for (const m of turn.messages) m.created = new Date(m.created);
      }
      out.push(rec);
    }
    return out;
  }

  /**
   * Append `rec` and answer its line (then call `stored` or `failed` once its statement has ended),
   * or null when it cannot be journaled: image bytes, a NUL character (PostgreSQL's text refuses
   * it, so its statement would fail at every start), a full or closed file, a failed write.
   */
  append(rec: AnswerRecord): Buffer | null {
    if (this.closed || this.bytes >= MAX_BYTES || rec.message?.imageRows?.length || rec.turn?.images.length) return null;
    const line = Buffer.from(`${JSON.stringify(rec)}\n`);
    if (line.includes('\\u0000')) return null;
    try {
      this.write(line);
    } catch {
      return null;
    }
    this.inFlight++;
    return line;
  }

  /** One journaled answer is in the database; with none left in flight the file is emptied. */
  stored(): void {
    this.ended();
  }

  /** One journaled answer's statement failed: its line stays for the next start. */
  failed(line: Buffer): void {
    this.kept.push(line);
    this.ended();
  }

  /** Forget every line (after a replay stored them). */
  empty(): void {
    ftruncateSync(this.fd, 0);
    this.bytes = 0;
    for (const line of this.kept) this.write(line);
  }

  /** No more lines are taken; the file is closed (what it holds stays for the next start). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    closeSync(this.fd);
  }

  private ended(): void {
    this.inFlight--;
    if (this.inFlight === 0 && !this.closed) this.empty();
  }

  private write(line: Buffer): void {
    for (let at = 0; at < line.length;) at += writeSync(this.fd, line, at);
    this.bytes += line.length;
  }
}
