import { readFile } from 'node:fs/promises';
import { Type } from 'typebox';
import { Value } from 'typebox/value';
import type { ModelsService } from './modules/models/service.js';
import { ModelRequest } from './modules/models/schema.js';
import { Uuid } from './http/schemas.js';

const SystemModelsFile = Type.Array(Type.Intersect([ModelRequest, Type.Object({ id: Uuid, name: Type.String({ minLength: 1 }) })]));

/**
 * System models defined by the operator: a JSON array of ModelRequest objects, each with a fixed
 * `id` and `name`, upserted at every start so the file stays the source of truth.
 */
export async function loadSystemModels(models: ModelsService, file: string): Promise<number> {
  const parsed: unknown = JSON.parse(await readFile(file, 'utf8'));
  if (!Value.Check(SystemModelsFile, parsed)) {
    const first = [...Value.Errors(SystemModelsFile, parsed)][0];
    throw new Error(`${file}: ${first ? `${first.instancePath} ${first.message}` : 'invalid system model list'}`);
  }
  for (const m of parsed as Array<Parameters<ModelsService['upsertSystemModel']>[0]>) await models.upsertSystemModel(m);
  return parsed.length;
}
