import { Ajv, type Options } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

function makeAjv(opts: Options): Ajv {
  const ajv = new Ajv({ allErrors: true, useDefaults: true, removeAdditional: false, strict: false, ...opts });
  addFormats.default(ajv);
  return ajv;
}

/**
 * Bodies are validated strictly (a string where a number belongs is a 400, never coerced);
 * query strings, path parameters and headers are text on the wire, so they are coerced.
 */
export function validatorCompiler(): FastifySchemaCompiler<unknown> {
  const strict = makeAjv({ coerceTypes: false });
  const coercing = makeAjv({ coerceTypes: 'array' });
  return ({ schema, httpPart }) => {
    // Multipart bodies are read part by part by the route (http/multipart.ts); their schema only documents them.
    if (httpPart === 'body' && (schema as Record<string, unknown>)['x-multipart'] === true) return () => true;
    return (httpPart === 'body' ? strict : coercing).compile(schema as object);
  };
}
