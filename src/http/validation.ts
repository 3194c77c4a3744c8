import { createRequire } from 'node:module';
import type { Ajv, Options, ValidateFunction } from 'ajv';
import type { FastifyRequest, FastifySchemaCompiler, FastifyServerOptions } from 'fastify';
import type { Static, TSchema } from 'typebox';
import { AppError, badRequest } from '../errors.js';
import { CompileQueue } from './compile-queue.js';

const require = createRequire(import.meta.url);

/** Ajv (CommonJS) is loaded on the first validator compiled, not while the server starts. */
function makeAjv(opts: Options): Ajv {
  const { Ajv: AjvClass } = require('ajv') as typeof import('ajv');
  const addFormats = require('ajv-formats') as { default: (ajv: Ajv) => void };
  const ajv = new AjvClass({ allErrors: true, useDefaults: true, removeAdditional: false, strict: false, ...opts });
  addFormats.default(ajv);
  return ajv;
}

function once<T>(make: () => T): () => T {
  let value: T | undefined;
  return () => (value ??= make());
}

/** A validation function as Fastify calls it: `false` and its `errors` when the value is invalid. */
type Validator = ((data: unknown) => boolean) & { errors?: ValidateFunction['errors'] };

/**
 * Compile a validator on its first call instead of now. Fastify compiles every route's schemas
 * before `ready`, which cost about a third of a second of start-up; the same validators (same
 * Ajv options, same schemas) are built, only later: on the route's first request, or by `warm`
 * in the background once the server is ready.
 */
function deferred(compile: () => ValidateFunction, queue: CompileQueue): Validator {
  const ready = queue.defer(compile);
  const validator: Validator = (data) => {
    const f = ready();
    const ok = f(data);
    validator.errors = f.errors;
    return ok;
  };
  return validator;
}

const isMultipartSchema = (schema: unknown) => (schema as Record<string, unknown> | undefined)?.['x-multipart'] === true;

/**
 * Bodies are validated strictly (a string where a number belongs is a 400, never coerced);
 * query strings, path parameters and headers are text on the wire, so they are coerced.
 */
type ValidatorFactory = NonNullable<NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>['buildValidator']>;

export function validatorCompiler(): { compiler: FastifySchemaCompiler<unknown>; buildValidator: ValidatorFactory; warm: () => void; pending: () => number } {
  const strict = once(() => makeAjv({ coerceTypes: false }));
  const coercing = once(() => makeAjv({ coerceTypes: 'array' }));
  const queue = new CompileQueue();
  const compiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
    // Multipart bodies are read part by part by the route (http/multipart.ts), whose text fields
    // are checked with formValidator; the body schema documents the form.
    if (httpPart === 'body' && isMultipartSchema(schema)) return () => true;
    return deferred(() => (httpPart === 'body' ? strict() : coercing()).compile(schema as object), queue);
  };
  // One validator per event-loop turn once ready (CompileQueue.warm).
  return {
    compiler,
    // For `schemaController.compilersFactory`, so Fastify never loads its own Ajv compiler (start-up
    // time). Fastify's type describes its default factory's product (`(schema) => validate`); at run
    // time it calls the product as a validator compiler (`({schema, httpPart}) => validate`), which
    // is what this one is.
    buildValidator: (() => compiler) as unknown as ValidatorFactory,
    warm: queue.warm,
    pending: () => queue.pending(),
  };
}

const formAjv = once(() => makeAjv({ coerceTypes: true }));

/**
 * A checker for the text fields of a multipart form (all strings on the wire, so coerced like a
 * query string: "true" is a boolean). Failures are the same 400 `validation_failed` as a JSON body's.
 */
export function formValidator<T extends TSchema>(schema: T): (fields: Record<string, string>) => Static<T> {
  const check = once(() => formAjv().compile(schema as object));
  return (fields) => {
    const value: Record<string, unknown> = { ...fields };
    const validate = check();
    if (validate(value)) return value as Static<T>;
    const errors = (validate.errors ?? []).map((e) => {
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
