import type { FastifyRequest } from 'fastify';
import { badRequest } from '../errors.js';

/** PostgreSQL text cannot hold NUL; such input is a client error, refused before it reaches SQL. */
function findNul(value: unknown, path: string, depth = 0): string | null {
  if (typeof value === 'string') return value.includes('\u0000') ? path : null;
  if (depth > 64 || value === null || typeof value !== 'object') return null;
  for (const [k, v] of Object.entries(value)) {
    if (k.includes('\u0000')) return `${path}/${k.replace(/\u0000/g, '')}`;
    const hit = findNul(v, `${path}/${k}`, depth + 1);
    if (hit) return hit;
  }
  return null;
}

export function assertNoNul(value: unknown, path: string): void {
  const where = findNul(value, path);
  if (where) throw badRequest('validation_failed', `${where}: must not contain NUL characters`, [{ path: where, message: 'must not contain NUL characters' }]);
}

export async function rejectNulInUrl(request: FastifyRequest): Promise<void> {
  if (/%00/i.test(request.url)) throw badRequest('validation_failed', 'The URL must not contain NUL characters');
}

export async function rejectNulInBody(request: FastifyRequest): Promise<void> {
  if (request.body !== undefined) assertNoNul(request.body, 'body');
}
