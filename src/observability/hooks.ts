/**
 * The one seam between the application and its telemetry (metrics.ts, tracing.ts). The code that
 * does the work calls these functions; with neither metrics nor tracing configured no observer is
 * installed and each call is a loop over an empty array. This file imports nothing, so the hot
 * path and start-up load nothing for telemetry that is off.
 */

/** How a chat turn ended, as its prompt log records it (ok, error, interrupted). */
export type TurnOutcome = 'ok' | 'error' | 'interrupted';

/** A finished turn as billed: what the metrics count of it. */
export interface TurnRecord {
  status: TurnOutcome;
  promptTokens: number;
  completionTokens: number;
  credits: number;
}

/** A provider call being observed: told when the first token arrives and how the call ended. */
export interface ProviderCallObservation {
  firstToken(): void;
  end(result: { usage: { promptTokens: number; completionTokens: number } | null; error: unknown }): void;
}

/** What a provider call is, in bounded values only (never a prompt, never an id). */
export interface ProviderCallInfo {
  /** OPENAI | ANTHROPIC | GOOGLE, with AZURE for Azure OpenAI */
  system: 'openai' | 'anthropic' | 'gcp.gemini' | 'az.ai.openai';
  /** the origin of the configured base URL (`https://api.openai.com`), never its path */
  apiBase: string;
  /** the model id sent to the provider */
  model: string;
  operation: 'chat';
  streaming: boolean;
}

export interface Observer {
  httpRequest?(method: string, route: string, status: number, seconds: number): void;
  chatTurn?(turn: TurnRecord): void;
  budgetRefusal?(): void;
  ingestFile?(outcome: string): void;
  /** a provider call starts; its observation is told how it goes */
  providerCall?(info: ProviderCallInfo): ProviderCallObservation;
  /** an ingestion starts; the returned function is called with its outcome when it ends */
  ingestion?(info: { bytes: number }): (outcome: string) => void;
}

const observers: Observer[] = [];

export function installObserver(o: Observer): void {
  observers.push(o);
}

/** Whether anything observes provider calls (the adapters are wrapped only then). */
export function observingProviders(): boolean {
  return observers.some((o) => o.providerCall);
}

export const observe = {
  httpRequest(method: string, route: string, status: number, seconds: number): void {
    for (const o of observers) o.httpRequest?.(method, route, status, seconds);
  },
  /** A chat turn ended and was billed (its ledger entry: tokens and credits as charged). */
  chatTurn(turn: TurnRecord): void {
    for (const o of observers) o.chatTurn?.(turn);
  },
  budgetRefusal(): void {
    for (const o of observers) o.budgetRefusal?.();
  },
  providerCall(info: ProviderCallInfo): ProviderCallObservation {
    const started = observers.flatMap((o) => (o.providerCall ? [o.providerCall(info)] : []));
    let first = true;
    return {
      firstToken() {
        if (!first) return;
        first = false;
        for (const s of started) s.firstToken();
      },
      end(result) {
        for (const s of started) s.end(result);
      },
    };
  },
  /** Around one file's ingestion: `outcome` is `ok` or the ingestion error's code. */
  async ingestion<T>(bytes: number, work: () => Promise<T>, outcomeOf: (err: unknown) => string): Promise<T> {
    if (observers.length === 0) return work();
    const ends = observers.flatMap((o) => (o.ingestion ? [o.ingestion({ bytes })] : []));
    const finish = (outcome: string) => {
      for (const e of ends) e(outcome);
      for (const o of observers) o.ingestFile?.(outcome);
    };
    try {
      const r = await work();
      finish('ok');
      return r;
    } catch (err) {
      finish(outcomeOf(err));
      throw err;
    }
  },
};

/**
 * A database client (PGlite, its thread's client, or a node-postgres pool) whose statements are
 * traced: its query methods are wrapped in place. Installed by tracing.ts; without it,
 * `traceStatements` leaves the client untouched.
 */
export type StatementTracer = (client: object, kind: 'pglite' | 'pg-pool') => void;
let statementTracer: StatementTracer | null = null;

export function installStatementTracer(t: StatementTracer): void {
  statementTracer = t;
}

/** Called by db/client.ts on each client it opens, before its first statement. */
export function traceStatements<T extends object>(client: T, kind: 'pglite' | 'pg-pool'): T {
  statementTracer?.(client, kind);
  return client;
}
