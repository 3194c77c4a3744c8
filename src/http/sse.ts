import type { FastifyReply } from 'fastify';

export interface SseOptions {
  /** interval of the `: ping` comment that keeps proxies from cutting an idle stream */
  heartbeatMs: number;
  /** reconnection delay announced once at the start (`retry:`) */
  retryMs?: number;
}

/**
 * Server-sent events on the raw response (after reply.hijack()): `retry:` once, then per event
 * `id: <n>` (1, 2, 3… per stream, ready for a Last-Event-ID resume), `event: <type>` and
 * `data: <JSON with the same type>`; a `: ping` comment every `heartbeatMs`.
 * The HTTP layer owns this; services only yield events.
 */
export class SseWriter {
  private closed = false;
  private nextId = 1;
  private heartbeat: NodeJS.Timeout | null = null;
  /** aborts when the client goes away before the stream ends */
  readonly abort = new AbortController();

  constructor(
    private readonly reply: FastifyReply,
    private readonly opts: SseOptions,
  ) {
    // Listening from the start: a client that leaves while the turn is being stored (before the
    // stream opens) still cancels the provider call.
    reply.raw.on('close', () => {
      if (!this.closed) this.abort.abort();
      this.stop();
    });
  }

  open(): void {
    this.reply.hijack();
    const raw = this.reply.raw;
    raw.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    raw.write(`retry: ${this.opts.retryMs ?? 3000}\n\n`);
    if (this.closed) return;
    this.heartbeat = setInterval(() => {
      if (!this.closed) raw.write(': ping\n\n');
    }, this.opts.heartbeatMs);
    this.heartbeat.unref();
  }

  send(type: string, data: object): void {
    if (this.closed) return;
    this.reply.raw.write(`id: ${this.nextId++}\nevent: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  }

  /** A bare `data:` line, no id or event name: the framing of OpenAI's streams (`data: {…}`, `data: [DONE]`). */
  sendData(data: string): void {
    if (this.closed) return;
    this.reply.raw.write(`data: ${data}\n\n`);
  }

  end(): void {
    if (this.closed) return;
    this.stop();
    this.reply.raw.end();
  }

  private stop(): void {
    this.closed = true;
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = null;
  }
}
