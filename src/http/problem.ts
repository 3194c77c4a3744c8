import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import { AppError, type ErrorKind, type FieldError } from '../errors.js';

const STATUS: Record<ErrorKind, number> = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  upstream: 502,
  upstream_timeout: 504,
};

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  409: 'Conflict',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  504: 'Gateway Timeout',
};

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  errors?: FieldError[];
}

export function problem(status: number, code: string, detail: string, errors?: FieldError[]): Problem {
  return {
    type: `https://atrium.dev/problems/${code}`,
    title: TITLES[status] ?? 'Error',
    status,
    detail,
    code,
    ...(errors ? { errors } : {}),
  };
}

export function statusOf(kind: ErrorKind): number {
  return STATUS[kind];
}

export function sendProblem(reply: FastifyReply, p: Problem): FastifyReply {
  return reply.code(p.status).type('application/problem+json').send(JSON.stringify(p));
}

/** Fastify's own client errors, mapped to our codes. Anything not here with a 4xx keeps its status. */
const FASTIFY_CODES: Record<string, [number, string, string]> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: [415, 'unsupported_media_type', 'Unsupported Content-Type'],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: [400, 'bad_request', 'Invalid Content-Length'],
  FST_ERR_CTP_BODY_TOO_LARGE: [413, 'body_too_large', 'Request body is too large'],
  FST_ERR_CTP_EMPTY_JSON_BODY: [400, 'malformed_json', 'Body cannot be empty when Content-Type is application/json'],
  FST_ERR_CTP_INVALID_JSON_BODY: [400, 'malformed_json', 'Body is not valid JSON'],
  FST_REQ_FILE_TOO_LARGE: [413, 'file_too_large', 'An uploaded file is too large'],
  FST_FILES_LIMIT: [413, 'too_many_files', 'Too many files in one request'],
  FST_PARTS_LIMIT: [413, 'too_many_parts', 'Too many parts in one request'],
  FST_FIELDS_LIMIT: [413, 'too_many_fields', 'Too many form fields'],
  FST_INVALID_MULTIPART_CONTENT_TYPE: [415, 'unsupported_media_type', 'The request is not multipart/form-data'],
  FST_PROTO_VIOLATION: [400, 'bad_request', 'Prototype pollution attempt in the body'],
};

function validationErrors(err: FastifyError): FieldError[] {
  return (err.validation ?? []).map((v) => {
    const missing = (v.params as { missingProperty?: string } | undefined)?.missingProperty;
    const base = v.instancePath || '';
    return {
      path: `${err.validationContext ?? 'body'}${base}${missing ? `/${missing}` : ''}`,
      message: v.message ?? 'is invalid',
    };
  });
}

/** The SQLSTATE of a database error, whether the driver's own or wrapped by drizzle (`cause`). */
function pgCode(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; e && typeof e === 'object' && depth < 3; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return code;
  }
  return undefined;
}

export function toProblem(err: unknown): { problem: Problem; isBug: boolean } {
  if (err instanceof AppError) {
    return { problem: problem(statusOf(err.kind), err.code, err.message, err.errors), isBug: false };
  }
  const fe = err as FastifyError;
  if (fe && Array.isArray(fe.validation)) {
    const errors = validationErrors(fe);
    const first = errors[0];
    return {
      problem: problem(400, 'validation_failed', first ? `${first.path}: ${first.message}` : 'Invalid request', errors),
      isBug: false,
    };
  }
  // Races the service checks cannot close (two creates of one id; a row deleted by another node
  // between check and write) surface as constraint violations: conflicts, not bugs.
  const sqlState = pgCode(err);
  if (sqlState === '23505') return { problem: problem(409, 'conflict', 'A resource with that identity already exists'), isBug: false };
  if (sqlState === '23503') return { problem: problem(409, 'conflict', 'A resource this request refers to no longer exists'), isBug: false };
  if (fe && typeof fe.code === 'string') {
    const mapped = FASTIFY_CODES[fe.code];
    if (mapped) return { problem: problem(mapped[0], mapped[1], mapped[2]), isBug: false };
  }
  if (fe && typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
    // Fastify and plugin client errors carry safe, generic messages.
    return { problem: problem(fe.statusCode, 'bad_request', fe.message), isBug: false };
  }
  return { problem: problem(500, 'internal_error', 'An unexpected error occurred'), isBug: true };
}

export function registerProblemHandlers(app: FastifyInstance): void {
  app.setErrorHandler((err, request, reply) => {
    const { problem: p, isBug } = toProblem(err);
    if (isBug) request.log.error({ err }, 'unhandled error');
    else request.log.info({ code: p.code, status: p.status }, 'request failed');
    if (err instanceof AppError && err.retryAfterSeconds !== undefined) reply.header('retry-after', String(err.retryAfterSeconds));
    return sendProblem(reply, p);
  });
  app.setNotFoundHandler((request, reply) =>
    sendProblem(reply, problem(404, 'route_not_found', `No route ${request.method} ${request.url.split('?')[0]}`)),
  );
}
