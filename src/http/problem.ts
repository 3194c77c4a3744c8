import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, retryHelps, statusOf, type FieldError } from '../errors.js';
import { setSecurityHeaders } from './security-headers.js';

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  409: 'Conflict',
  413: 'Content Too Large',
  414: 'URI Too Long',
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

/** `err`: the error answered, when there is one (it may mark a 5xx as final). */
export function sendProblem(reply: FastifyReply, p: Problem, err?: unknown): FastifyReply {
  // The header the OpenAI and Anthropic SDKs read before their automatic retries.
  if (!retryHelps(p.status, err)) reply.header('x-should-retry', 'false');
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

/** A validation answer lists at most this many problems: 600 KB of unknown keys must not become a 4 MB answer. */
export const MAX_LISTED_PROBLEMS = 20;

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

/** The answer to input that failed its schema: the first problem in `detail`, at most MAX_LISTED_PROBLEMS listed. */
function validationProblem(errors: FieldError[]): Problem {
  const first = errors[0];
  return listing(400, 'validation_failed', first ? `${first.path}: ${first.message}` : 'Invalid request', errors);
}

function listing(status: number, code: string, detail: string, errors: FieldError[] | undefined): Problem {
  if (!errors || errors.length <= MAX_LISTED_PROBLEMS) return problem(status, code, detail, errors);
  return problem(status, code, `${detail} (${errors.length} problems; the first ${MAX_LISTED_PROBLEMS} are listed)`, errors.slice(0, MAX_LISTED_PROBLEMS));
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
    return { problem: listing(statusOf(err.kind), err.code, err.message, err.errors), isBug: false };
  }
  const fe = err as FastifyError;
  if (fe && Array.isArray(fe.validation)) return { problem: validationProblem(validationErrors(fe)), isBug: false };
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

/**
 * Errors Fastify's router raises before any route or error handler runs (an undecodable URL, a
 * path parameter longer than maxParamLength): problem+json like every other error.
 */
export function frameworkErrors(err: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  beforeHooks(request, reply);
  void sendProblem(reply, frameworkProblem(err));
}

/** What such a router error is; under `/v1` it is sent in OpenAI's shape (http/openai-errors.ts). */
export function frameworkProblem(err: FastifyError): Problem {
  if (err.code === 'FST_ERR_MAX_PARAM_LENGTH') return problem(414, 'uri_too_long', 'A path segment is too long');
  if (err.code === 'FST_ERR_BAD_URL') return problem(400, 'bad_url', 'The URL is not validly percent-encoded');
  return toProblem(err).problem;
}

/** The headers every answer carries, set here because router errors come before any hook runs. */
export function beforeHooks(request: FastifyRequest, reply: FastifyReply): void {
  setSecurityHeaders(request.raw.url, reply.raw);
  reply.header('x-request-id', request.id);
}

/**
 * The methods each route path answers, so that a known path asked with another method is a 405
 * with `Allow` rather than a 404. Paths are matched by shape: `:param` stands for one segment.
 */
class MethodTable {
  private readonly byPattern = new Map<string, { re: RegExp; methods: Set<string> }>();

  add(url: string, methods: string | string[]): void {
    let entry = this.byPattern.get(url);
    if (!entry) {
      const re = new RegExp(
        '^' +
          url
            .split('/')
            .map((seg) => (seg.startsWith(':') ? '[^/]+' : seg === '*' ? '.*' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
            .join('/') +
          '/?$',
      );
      entry = { re, methods: new Set() };
      this.byPattern.set(url, entry);
    }
    for (const m of Array.isArray(methods) ? methods : [methods]) entry.methods.add(m.toUpperCase());
  }

  allowed(path: string): string[] {
    const out = new Set<string>();
    for (const { re, methods } of this.byPattern.values()) if (re.test(path)) for (const m of methods) out.add(m);
    return [...out].sort();
  }
}

/**
 * `foreignPrefixes`: path prefixes (e.g. `/v1/`) whose plugin scope answers its own errors in
 * another shape; the 405 hook leaves them alone and they ask `allowedMethods` instead.
 */
export function registerProblemHandlers(app: FastifyInstance, opts: { foreignPrefixes?: string[] } = {}): { allowedMethods(path: string): string[] } {
  const methods = new MethodTable();
  const foreign = opts.foreignPrefixes ?? [];
  // Registered before any route, so it sees them all (and the HEAD twins Fastify adds for GETs).
  app.addHook('onRoute', (route) => methods.add(route.url, route.method));
  app.setErrorHandler((err, request, reply) => {
    const { problem: p, isBug } = toProblem(err);
    if (isBug) request.log.error({ err }, 'unhandled error');
    else request.log.info({ code: p.code, status: p.status }, 'request failed');
    if (err instanceof AppError && err.retryAfterSeconds !== undefined) reply.header('retry-after', String(err.retryAfterSeconds));
    return sendProblem(reply, p, err);
  });
  // A known path asked with a method it does not answer: 405 with Allow. Decided on request, before
  // any body is parsed, so that a body-less QUERY or a PUT with an odd Content-Type gets it too.
  app.addHook('onRequest', async (request, reply) => {
    if (!request.is404) return;
    const path = request.url.split('?')[0] ?? '/';
    if (foreign.some((p) => path.startsWith(p))) return;
    const allow = methods.allowed(path);
    if (allow.length === 0) return;
    reply.header('allow', allow.join(', '));
    return sendProblem(reply, problem(405, 'method_not_allowed', `${request.method} is not allowed on ${path}; allowed: ${allow.join(', ')}`));
  });
  app.setNotFoundHandler((request, reply) => sendProblem(reply, problem(404, 'route_not_found', `No route ${request.method} ${request.url.split('?')[0]}`)));
  return { allowedMethods: (path) => methods.allowed(path) };
}
