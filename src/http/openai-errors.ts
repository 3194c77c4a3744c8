import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, retryHelps, statusOf, type ErrorKind } from '../errors.js';
import { beforeHooks, frameworkErrors, frameworkProblem, toProblem } from './problem.js';

/**
 * OpenAI's error shape for the `/v1` scope (docs/API.md, "OpenAI-compatible API"):
 * `{error: {message, type, param, code}}` with the statuses of the problem+json answers, so that
 * OpenAI's SDKs raise their own typed errors. The classification is problem.ts's (`toProblem`):
 * one taxonomy, two renderings.
 */
export interface OpenAIErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

function typeOf(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 429) return 'rate_limit_error';
  if (status === 502 || status === 504) return 'api_error';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

/** `body/messages/0/content` → `messages[0].content` (OpenAI's way of naming a parameter). */
function paramOf(path: string | undefined): string | null {
  if (!path) return null;
  const parts = path.split('/').slice(1);
  if (parts.length === 0) return null;
  return parts.map((p, i) => (/^\d+$/.test(p) ? `[${p}]` : i === 0 ? p : `.${p}`)).join('');
}

export function openAIErrorBody(status: number, code: string | null, message: string, param: string | null = null): OpenAIErrorBody {
  return { error: { message, type: typeOf(status), param, code } };
}

/** A turn's failure after the stream started, as the `error` object of one chunk. */
export function openAIStreamError(e: { kind: ErrorKind; code: string; message: string }): OpenAIErrorBody {
  return openAIErrorBody(statusOf(e.kind), e.code, e.message);
}

/** Any thrown error as OpenAI's shape, its status, and whether it is a bug (logged, never detailed). */
export function toOpenAIError(err: unknown): { status: number; body: OpenAIErrorBody; isBug: boolean; retryAfterSeconds?: number } {
  const { problem: p, isBug } = toProblem(err);
  const code = p.code === 'route_not_found' ? 'unknown_url' : p.code;
  return {
    status: p.status,
    body: openAIErrorBody(p.status, code, p.detail, paramOf(p.errors?.[0]?.path)),
    isBug,
    ...(err instanceof AppError && err.retryAfterSeconds !== undefined ? { retryAfterSeconds: err.retryAfterSeconds } : {}),
  };
}

function send(reply: FastifyReply, status: number, body: OpenAIErrorBody, err?: unknown): FastifyReply {
  if (!retryHelps(status, err)) reply.header('x-should-retry', 'false');
  return reply.code(status).type('application/json; charset=utf-8').send(JSON.stringify(body));
}

/**
 * Errors Fastify's router raises before any route or hook runs (an undecodable URL, a path
 * segment too long): in OpenAI's shape under `/v1`, where clients parse that shape; problem+json
 * elsewhere.
 */
export function routerErrors(err: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  if (!/^\/v1(?:[/?]|$)/.test(request.raw.url ?? '')) return frameworkErrors(err, request, reply);
  beforeHooks(request, reply);
  const p = frameworkProblem(err);
  void send(reply, p.status, openAIErrorBody(p.status, p.code, p.detail));
}

/**
 * Make a plugin scope answer every error in OpenAI's shape: its error handler, its unknown paths
 * (404 `unknown_url`) and a known path asked with another method (405 with `Allow`). Call it
 * before the scope's other hooks, so a wrong method is told so before authentication.
 */
export function registerOpenAIErrorScope(scope: FastifyInstance, allowedMethods: (path: string) => string[]): void {
  scope.setErrorHandler((err, request, reply) => {
    const e = toOpenAIError(err);
    if (e.isBug) request.log.error({ err }, 'unhandled error');
    if (e.retryAfterSeconds !== undefined) reply.header('retry-after', String(e.retryAfterSeconds));
    return send(reply, e.status, e.body, err);
  });
  scope.addHook('onRequest', async (request, reply) => {
    if (!request.is404) return;
    const path = request.url.split('?')[0] ?? '/';
    const allow = allowedMethods(path);
    if (allow.length === 0) return;
    reply.header('allow', allow.join(', '));
    return send(reply, 405, openAIErrorBody(405, 'method_not_allowed', `${request.method} is not allowed on ${path}; allowed: ${allow.join(', ')}`));
  });
  scope.setNotFoundHandler((request, reply) =>
    send(reply, 404, openAIErrorBody(404, 'unknown_url', `Unknown request URL: ${request.method} ${request.url.split('?')[0]}`)),
  );
}
