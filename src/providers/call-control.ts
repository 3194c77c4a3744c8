/**
 * Timeouts, cancellation and stream guarding shared by all adapters.
 *
 * One {@link CallControl} per upstream call owns an AbortController whose signal is handed
 * to the SDK. The caller's signal, the total/connect/idle timers all funnel into `fail()`,
 * which records WHY the call stopped (so a later SDK error — or an SDK stream that ends
 * silently on abort, as the Stainless SDKs do — is reported with the right kind) and then
 * aborts the upstream HTTP request.
 */
import { classifyProviderError } from './classify.js';
import { ProviderError, providerAborted, providerBadResponse, providerTimeout } from './errors.js';
import type { ProviderRequest, ProviderTimeouts, StreamEvent, ToolCallDelta, Usage } from './types.js';

const MAX_TIMER_MS = 2_147_483_647;

function validMs(ms: number): number | null {
  return typeof ms === 'number' && Number.isFinite(ms) && ms > 0 ? Math.min(Math.ceil(ms), MAX_TIMER_MS) : null;
}

/**
 * Timeout to give the SDK's own timer: a backstop slightly above ours, so our timer (which knows
 * the reason) always fires first.
 */
export function sdkTimeoutMs(t: ProviderTimeouts): number {
  const total = validMs(t.totalMs);
  return total === null ? 600_000 : Math.min(total + 1_000, MAX_TIMER_MS);
}

export const ZERO_USAGE: Usage = Object.freeze({ promptTokens: 0, completionTokens: 0, totalTokens: 0 });

export function usageOf(prompt: unknown, completion: unknown, total?: unknown): Usage {
  const p = typeof prompt === 'number' && Number.isFinite(prompt) ? prompt : 0;
  const c = typeof completion === 'number' && Number.isFinite(completion) ? completion : 0;
  const t = typeof total === 'number' && Number.isFinite(total) && total > 0 ? total : p + c;
  return { promptTokens: p, completionTokens: c, totalTokens: t };
}

export class CallControl {
  private readonly controller = new AbortController();
  private failure: ProviderError | null = null;
  private rejectFailed!: (e: ProviderError) => void;
  /** Rejects with the ProviderError as soon as the call is failed by a timer or the caller. */
  private readonly failed: Promise<never>;
  private totalTimer: NodeJS.Timeout | undefined;
  private connectTimer: NodeJS.Timeout | undefined;
  private idleTimer: NodeJS.Timeout | undefined;
  private readonly onCallerAbort = (): void => this.fail(providerAborted());

  constructor(
    private readonly timeouts: ProviderTimeouts,
    private readonly callerSignal?: AbortSignal,
  ) {
    this.failed = new Promise<never>((_, reject) => {
      this.rejectFailed = reject;
    });
    this.failed.catch(() => {}); // observed via race(); never an unhandled rejection
    if (callerSignal?.aborted) {
      this.fail(providerAborted());
      return;
    }
    callerSignal?.addEventListener('abort', this.onCallerAbort, { once: true });
    const total = validMs(timeouts.totalMs);
    if (total !== null) this.totalTimer = setTimeout(() => this.fail(providerTimeout()), total);
  }

  /** Signal to pass to the SDK. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Arm the time-to-response-headers deadline (streaming calls). */
  startConnect(): void {
    const ms = validMs(this.timeouts.connectMs);
    if (ms !== null && !this.failure) this.connectTimer = setTimeout(() => this.fail(providerTimeout()), ms);
  }

  connected(): void {
    clearTimeout(this.connectTimer);
  }

  armIdle(): void {
    clearTimeout(this.idleTimer);
    const ms = validMs(this.timeouts.idleMs);
    if (ms !== null && !this.failure) this.idleTimer = setTimeout(() => this.fail(providerTimeout()), ms);
  }

  disarmIdle(): void {
    clearTimeout(this.idleTimer);
  }

  fail(err: ProviderError): void {
    if (this.failure) return;
    this.failure = err;
    this.clearTimers();
    this.rejectFailed(err);
    this.controller.abort();
  }

  throwIfFailed(): void {
    if (this.failure) throw this.failure;
  }

  /** Settles with `p`, or rejects as soon as the call fails (timer / caller abort). */
  race<T>(p: Promise<T>): Promise<T> {
    p.catch(() => {}); // the loser of the race must not become an unhandled rejection
    return Promise.race([p, this.failed]);
  }

  /** The reason we stopped the call wins over whatever the SDK threw because of it. */
  toError(err: unknown): ProviderError {
    return this.failure ?? classifyProviderError(err);
  }

  /** Abort the upstream request (no-op if already finished or aborted). */
  cancel(): void {
    if (!this.controller.signal.aborted) this.controller.abort();
  }

  dispose(): void {
    this.clearTimers();
    this.callerSignal?.removeEventListener('abort', this.onCallerAbort);
  }

  private clearTimers(): void {
    clearTimeout(this.totalTimer);
    clearTimeout(this.connectTimer);
    clearTimeout(this.idleTimer);
  }
}

/** Run one non-streaming call under a CallControl. */
export async function guardedCall<T>(req: ProviderRequest, call: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const control = new CallControl(req.timeouts, req.signal);
  try {
    control.throwIfFailed();
    return await control.race(call(control.signal));
  } catch (err) {
    throw control.toError(err);
  } finally {
    control.dispose();
  }
}

/** Mutable per-stream accumulator the protocol-specific chunk handler fills in. */
export interface StreamState {
  finishReason: string | null;
  usage: Usage | null;
  /** Tool-call pieces of the current chunk: handed out after its text, then cleared. */
  toolCalls: ToolCallDelta[];
}

/**
 * Run one streaming call: `open` must resolve once the response headers arrived (all three SDKs
 * do) with the SDK's async iterable of chunks; `onChunk` turns a chunk into delta text (or
 * nothing) and records finish reason / usage / tool-call pieces in `state`.
 *
 * Guarantees: connect / idle / total timeouts; caller abort; if the consumer stops iterating
 * early the upstream request is aborted; a stream that ends without a finish reason is a
 * `bad_response`; once content was emitted errors are marked non-retryable.
 */
export async function* guardedStream<C>(
  req: ProviderRequest,
  open: (signal: AbortSignal) => Promise<AsyncIterable<C>>,
  onChunk: (chunk: C, state: StreamState) => string | null | undefined,
): AsyncGenerator<StreamEvent, void, undefined> {
  const control = new CallControl(req.timeouts, req.signal);
  let iterator: AsyncIterator<C> | undefined;
  let emitted = false;
  let complete = false;
  try {
    control.throwIfFailed();
    control.startConnect();
    const iterable = await control.race(open(control.signal));
    control.connected();
    iterator = iterable[Symbol.asyncIterator]();
    const state: StreamState = { finishReason: null, usage: null, toolCalls: [] };
    for (;;) {
      control.armIdle();
      const r = await control.race(iterator.next());
      control.disarmIdle();
      if (r.done) break;
      const delta = onChunk(r.value, state);
      if (delta) {
        emitted = true;
        yield { type: 'delta', content: delta };
      }
      if (state.toolCalls.length > 0) {
        emitted = true;
        const calls = state.toolCalls.splice(0);
        for (const call of calls) yield { type: 'tool_call', call };
      }
    }
    // The Stainless SDKs end the iteration silently when their signal is aborted.
    control.throwIfFailed();
    if (state.finishReason === null) throw providerBadResponse('a stream that ended before the answer was complete');
    complete = true;
    yield { type: 'done', finishReason: state.finishReason, usage: state.usage ?? { ...ZERO_USAGE } };
  } catch (err) {
    const e = control.toError(err);
    if (emitted && e.retryable) {
      // Retrying would repeat already-delivered text: hand out a copy marked non-retryable.
      const message = e.kind === 'connection_failed' ? 'The connection to the model provider broke off in the middle of the answer' : e.message;
      const copy = new ProviderError(e.kind, message, e.upstreamStatus, false);
      if (e.upstreamCode !== undefined) copy.upstreamCode = e.upstreamCode;
      throw copy;
    }
    throw e;
  } finally {
    control.dispose();
    if (!complete) {
      control.cancel();
      // Let the SDK release its resources; do not wait (a pending next() may still be settling).
      iterator?.return?.()?.catch(() => {});
    }
  }
}
