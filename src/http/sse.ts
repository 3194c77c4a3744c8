import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * Server-sent events on the raw response (after reply.hijack()): `event: <type>` then
 * `data: <JSON with the same type>`. The HTTP layer owns this; services only yield events.
 */
export class SseWriter {
  private closed = false;
  /** aborts when the client goes away before the stream ends */
  readonly abort = new AbortController();

  constructor(
    private readonly request: FastifyRequest,
    private readonly reply: FastifyReply,
  ) {}

  open(): void {
    this.reply.hijack();
    const raw = this.reply.raw;
    raw.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    raw.flushHeaders();
    raw.on('close', () => {
      if (!this.closed) this.abort.abort();
      this.closed = true;
    });
  }

  send(type: string, data: object): void {
    if (this.closed) return;
    this.reply.raw.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  }

  end(): void {
    if (this.closed) return;
    this.closed = true;
    this.reply.raw.end();
  }

  get clientGone(): boolean {
    return this.abort.signal.aborted;
  }

  get log() {
    return this.request.log;
  }
}
