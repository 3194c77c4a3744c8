import type { FastifyRequest } from 'fastify';

/**
 * docs/API.md, Conventions: bodies the seed describes as "field X of type T" are accepted wrapped
 * (`{"X": ...}`) and bare. This preValidation hook unwraps the first form so one schema validates both.
 */
export function acceptWrapped(field: string) {
  return async (request: FastifyRequest): Promise<void> => {
    const body = request.body;
    if (body && typeof body === 'object' && !Array.isArray(body)) {
      const keys = Object.keys(body);
      if (keys.length === 1 && keys[0] === field) request.body = (body as Record<string, unknown>)[field];
    }
  };
}
