import type { FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import type { Principal } from '../modules/teams/service.js';
import type { TeamsService } from '../modules/teams/service.js';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
  }
}

/** Reads `Authorization: Bearer <key>` and sets request.principal; 401 when missing or unknown. */
export function authenticate(teams: TeamsService) {
  return async (request: FastifyRequest): Promise<void> => {
    const header = request.headers.authorization;
    const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    if (!match?.[1]) throw new AppError('unauthorized', 'missing_api_key', 'Send an API key as Authorization: Bearer <key>');
    const principal = await teams.authenticate(match[1]);
    if (!principal) throw new AppError('unauthorized', 'invalid_api_key', 'The API key is unknown or revoked');
    request.principal = principal;
  };
}

/** The caller of an authenticated route (the hook guarantees it is set). */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new AppError('unauthorized', 'missing_api_key', 'Authentication required');
  return request.principal;
}
