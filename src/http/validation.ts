import { Ajv, type Options } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifyRequest, FastifySchemaCompiler } from 'fastify';
import type { Static, TSchema } from 'typebox';
import { AppError, badRequest } from '../errors.js';

function makeAjv(opts: Options): Ajv {
  const ajv = new Ajv({ allErrors: true, useDefaults: true, removeAdditional: false, strict: false, ...opts });
  addFormats.default(ajv);
  return ajv;
}

const isMultipartSchema = (schema: unknown) => (schema as Record<string, unknown> | undefined)?.['x-multipart'] === true;

/**
 * Bodies are validated strictly (a string where a number belongs is a 400, never coerced);
 * query strings, path parameters and headers are text on the wire, so they are coerced.
 */
export function validatorCompiler(): FastifySchemaCompiler<unknown> {
  const strict = makeAjv({ coerceTypes: false });
  const coercing = makeAjv({ coerceTypes: 'array' });
  return ({ schema, httpPart }) => {
    // Multipart bodies are read part by part by the route (http/multipart.ts), whose text fields
    // are checked with formValidator; the body schema documents the form.
    if (httpPart === 'body' && isMultipartSchema(schema)) return () => true;
    return (httpPart === 'body' ? strict : coercing).compile(schema as object);
  };
}

const formAjv = makeAjv({ coerceTypes: true });

/**
 * A checker for the text fields of a multipart form (all strings on the wire, so coerced like a
 * query string: "true" is a boolean). Failures are the same 400 `validation_failed` as a JSON body's.
 */
export function formValidator<T extends TSchema>(schema: T): (fields: Record<string, string>) => Static<T> {
  const check = formAjv.compile(schema as object);
  return (fields) => {
    const value: Record<string, unknown> = { ...fields };
    if (check(value)) return value as Static<T>;
    const errors = (check.errors ?? []).map((e) => {
      const missing = (e.params as { missingProperty?: string }).missingProperty;
      return { path: `body${e.instancePath}${missing ? `/${missing}` : ''}`, message: e.message ?? 'is invalid' };
    });
    const first = errors[0];
    throw badRequest('validation_failed', first ? `${first.path}: ${first.message}` : 'Invalid form', errors);
  };
}

/**
 * Routes whose body schema is JSON take only `application/json`: any other media type (text/plain,
 * a multipart form, none at all with a body) is a 415, decided before the body is read.
 */
export async function requireJsonBody(request: FastifyRequest): Promise<void> {
  const body = request.routeOptions.schema?.body;
  if (!body || isMultipartSchema(body)) return;
  const hasBody = request.headers['transfer-encoding'] !== undefined || Number(request.headers['content-length'] ?? 0) > 0;
  if (!hasBody) return;
  const type = (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json') {
    throw new AppError('unsupported_media_type', 'unsupported_media_type', `Send the body as application/json${type ? `, not ${type}` : ''}`);
  }
}
