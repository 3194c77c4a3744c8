import { randomUUID } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { IncomingMessage } from 'node:http';

/** A client's own id is taken when it is short and plain (no spaces, quotes or control characters). */
const SANE_ID = /^[A-Za-z0-9._:@/+=-]{1,128}$/;

/**
 * Fastify's `genReqId`: the client's `x-request-id` when sane (so a caller's trace id runs through
 * our logs), else a random UUID. Fastify's own `requestIdHeader` would take any value as given.
 */
export function requestId(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && SANE_ID.test(given) ? given : randomUUID();
}

/** `onRequest`: every answer says its request id (a hijacked event stream writes it itself: sse.ts). */
export async function sendRequestId(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  reply.header('x-request-id', request.id);
}
