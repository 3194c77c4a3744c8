import type { Static, TSchema } from 'typebox';
import { Value } from 'typebox/value';
import { SHARED_SCHEMAS } from '../../src/app.js';

/** The shared schemas the routes refer to by `$id` (Type.Ref), as app.ts registers them. */
const SHARED: Record<string, TSchema> = Object.fromEntries(SHARED_SCHEMAS.map((s) => [(s as unknown as { $id: string }).$id, s]));

/**
 * Check a response body against the TypeBox schema its route declares (the same object from
 * src/modules/<name>/schema.ts), so a test fails when the API drifts from its documented shape.
 * Fails with every mismatch listed by JSON pointer; answers the body typed by the schema.
 */
export function expectShape<T extends TSchema>(schema: T, body: unknown): Static<T> {
  if (Value.Check(SHARED, schema, body)) return body as Static<T>;
  const errors = Value.Errors(SHARED, schema, body);
  const lines = errors.slice(0, 20).map((e) => `  ${e.instancePath || '(root)'}: ${e.message} (at value ${preview(pointer(body, e.instancePath))})`);
  if (errors.length > 20) lines.push(`  … and ${errors.length - 20} more`);
  const name = (schema as { $id?: string }).$id ?? 'the declared schema';
  throw new Error(`response does not match ${name}:\n${lines.join('\n')}`);
}

function pointer(value: unknown, path: string): unknown {
  let v = value;
  for (const key of path.split('/').slice(1)) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string, unknown>)[key.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return v;
}

function preview(v: unknown): string {
  const s = JSON.stringify(v) ?? String(v);
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}
