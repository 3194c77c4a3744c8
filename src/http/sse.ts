import type { FastifyReply } from 'fastify';

export interface SseOptions {
  /** interval of the `: ping` comment that keeps proxies from cutting an idle stream */
  heartbeatMs: number;
  /**
   * reconnection delay announced once (`retry:`), inside the first event: a block of its own with no
   * `data:` reads as an empty event in some parsers (Python's openai SDK, httpx-sse). Absent: never sent.
   */
  retryMs?: number;
}

/**
 * Server-sent events on the raw response (after reply.hijack()): per event `id: <n>` (1, 2, 3… per
 * stream, ready for a Last-Event-ID resume), `event: <type>` and `data: <JSON with the same type>`,
 * the first also carrying `retry:` when asked; a `: ping` comment line every `heartbeatMs`. Every
 * blank line the stream sends closes a block that holds data, so no parser sees an empty event.
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
      // headers set on the reply before hijack() are not sent: the one every answer carries
      'x-request-id': String(this.reply.request.id),
    });
    // The headers go now (the first event may be seconds away); no body until there is an event.
    raw.flushHeaders();
    if (this.closed) return;
    this.heartbeat = setInterval(() => {
      // A comment line alone, no blank line after it: parsers that keep the last id across events
      // (httpx-sse) would dispatch an empty event at a blank line that closes a comment-only block.
      if (!this.closed) raw.write(': ping\n');
    }, this.opts.heartbeatMs);
    this.heartbeat.unref();
  }

  send(type: string, data: object): void {
    if (this.closed) return;
    const retry = this.nextId === 1 && this.opts.retryMs !== undefined ? `retry: ${this.opts.retryMs}\n` : '';
    this.reply.raw.write(`${retry}id: ${this.nextId++}\nevent: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
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
