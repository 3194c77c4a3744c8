/**
 * fast-check arbitraries derived from the OpenAPI document's JSON Schemas: `valid` draws values
 * the schema accepts (bounded in size), `invalid` draws values near and far outside it (wrong
 * types, integers past a column's range, strings past maxLength, NUL and lone surrogates, unknown
 * keys, missing required keys). The fuzzer sends both and accepts any answer but a 5xx.
 */
import fc from 'fast-check';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Schema = Record<string, any>;

export interface FuzzContext {
  /** the components of the document, to resolve `$ref` */
  schemas: Record<string, Schema>;
  /** ids of resources that exist, drawn for `format: uuid` so that requests get past 404 */
  ids: string[];
  /** the fixture's id for a field or parameter name (`workspaceId`, `modelIds`, …), drawn most often */
  idsByName: Record<string, string>;
  /** integer ids that exist (users) */
  intIds: number[];
  /** provider URLs a model may be given: never a real host (no DNS, no network) */
  urls: string[];
}

const MAX_STRING = 24;
const MAX_ITEMS = 3;

export function resolve(s: Schema, ctx: FuzzContext): Schema {
  let out = s;
  for (let i = 0; i < 10 && typeof out.$ref === 'string'; i++) {
    const name = out.$ref.replace('#/components/schemas/', '');
    const target = ctx.schemas[name];
    if (!target) throw new Error(`unresolved $ref ${out.$ref}`);
    out = target;
  }
  return out;
}

/** Values that break some assumption of almost any field. */
export const hostile: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>(
    null,
    true,
    false,
    0,
    -1,
    1.5,
    2_147_483_648,
    -2_147_483_649,
    2 ** 53 + 2,
    1e17,
    1e308,
    -1e308,
    '',
    ' ',
    '\u0000',
    'a\u0000b',
    '\ud800',
    '💥'.repeat(50),
    'x'.repeat(5_000),
    '../../etc/passwd',
    "' or 1=1 --",
    '{{prompt}}',
    'NaN',
    'true',
    '2147483648',
    '00000000-0000-0000-0000-000000000000',
    [],
    {},
    [null],
    { __proto__: { polluted: true } },
    { constructor: { prototype: { polluted: true } } },
  ),
  fc.anything({ maxDepth: 2, maxKeys: 4 }),
);

function stringArb(s: Schema, name: string | undefined, ctx: FuzzContext): fc.Arbitrary<string> {
  if (name === 'url') return fc.constantFrom(...ctx.urls);
  // /v1's `model` names a workspace: mostly the fixture's, so requests reach the chat handler.
  if (name === 'model' && ctx.idsByName.model)
    return fc.oneof({ arbitrary: fc.constant(ctx.idsByName.model), weight: 4 }, { arbitrary: fc.string({ maxLength: 60 }), weight: 1 });
  const min = s.minLength ?? 0;
  const max = Math.max(min, Math.min(s.maxLength ?? MAX_STRING, MAX_STRING));
  switch (s.format) {
    case 'uuid': {
      const own = name ? ctx.idsByName[name] : undefined;
      return fc.oneof(
        ...(own ? [{ arbitrary: fc.constant(own), weight: 6 }] : []),
        { arbitrary: fc.constantFrom(...ctx.ids), weight: 2 },
        { arbitrary: fc.uuid(), weight: 1 },
      );
    }
    case 'date-time':
      return fc.date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString());
    case 'binary':
      return fc.string({ maxLength: 200 });
  }
  if (typeof s.pattern === 'string') return fc.stringMatching(new RegExp(s.pattern)).filter((v) => v.length >= min && v.length <= (s.maxLength ?? Infinity));
  return fc.oneof(
    fc.string({ minLength: min, maxLength: max, unit: 'grapheme-ascii' }),
    fc.string({ minLength: min, maxLength: max, unit: 'grapheme' }),
    fc.string({ minLength: min, maxLength: max, unit: 'binary' }),
  );
}

export function valid(schema: Schema, ctx: FuzzContext, name?: string, depth = 0): fc.Arbitrary<unknown> {
  const s = resolve(schema, ctx);
  if (s.const !== undefined) return fc.constant(s.const);
  if (Array.isArray(s.enum)) return fc.constantFrom(...(s.enum as unknown[]));
  const branches = (s.anyOf ?? s.oneOf) as Schema[] | undefined;
  if (branches) return fc.oneof(...branches.map((b) => valid(b, ctx, name, depth)));
  if (Array.isArray(s.type)) return fc.oneof(...(s.type as string[]).map((type) => valid({ ...s, type }, ctx, name, depth)));
  switch (s.type) {
    case 'string':
      return stringArb(s, name, ctx);
    case 'integer': {
      if (name === 'userId' && ctx.intIds.length > 0) return fc.constantFrom(...ctx.intIds);
      const min = s.minimum ?? -(2 ** 31);
      const max = s.maximum ?? 2 ** 31 - 1;
      return fc.oneof(fc.constantFrom(min, max), fc.integer({ min: Math.max(min, -(2 ** 31)), max: Math.min(max, 2 ** 31 - 1) }));
    }
    case 'number':
      return fc.double({ min: s.minimum ?? -1e6, max: s.maximum ?? 1e6, noNaN: true, noDefaultInfinity: true });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array': {
      const minLength = s.minItems ?? 0;
      return fc.array(valid(s.items ?? {}, ctx, name, depth + 1), { minLength, maxLength: Math.max(minLength, Math.min(s.maxItems ?? MAX_ITEMS, MAX_ITEMS)) });
    }
    case 'object':
    case undefined: {
      if (!s.properties && !s.additionalProperties && s.type === undefined) return hostile;
      const props = (s.properties ?? {}) as Record<string, Schema>;
      const record: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [k, v] of Object.entries(props)) record[k] = valid(v, ctx, k, depth + 1);
      // Few optional fields at a time: a request setting all thirty fields of a model at random
      // almost never passes the cross-field rules, and would leave the handlers untested.
      const required = (s.required ?? []) as string[];
      const optional = Object.keys(record).filter((k) => !required.includes(k));
      const base = fc
        .subarray(optional, { maxLength: Math.min(4, optional.length) })
        .chain((chosen) => fc.record(Object.fromEntries([...required, ...chosen].map((k) => [k, record[k]!]))));
      if (s.additionalProperties && typeof s.additionalProperties === 'object' && Object.keys(props).length === 0) {
        const keys = s.propertyNames?.pattern ? fc.stringMatching(new RegExp(s.propertyNames.pattern)) : fc.string({ maxLength: 8 });
        return fc.dictionary(keys, valid(s.additionalProperties, ctx, undefined, depth + 1), { maxKeys: MAX_ITEMS });
      }
      return base;
    }
    default:
      return hostile;
  }
}

/** Values just outside the schema, or far from it. */
export function invalid(schema: Schema, ctx: FuzzContext, name?: string, depth = 0): fc.Arbitrary<unknown> {
  const s = resolve(schema, ctx);
  const near: Array<fc.Arbitrary<unknown>> = [hostile];
  const types = Array.isArray(s.type) ? (s.type as string[]) : [s.type as string | undefined];
  if (types.includes('integer') || types.includes('number')) {
    near.push(fc.constantFrom((s.maximum ?? 2 ** 31 - 1) + 1, (s.minimum ?? -(2 ** 31)) - 1, 2 ** 31, 2 ** 53 + 2, 1e17, -1e17, 0.5));
  }
  if (types.includes('string')) {
    const over = (s.maxLength ?? 1_000) + 1;
    near.push(fc.constantFrom('z'.repeat(Math.min(over, 1_100_000)), 'not-a-uuid', '2024-13-45T99:99:99Z', '\u0000', '\ud800\udc00\ud800'));
  }
  if (types.includes('array') && depth < 2) {
    const max = s.maxItems ?? 10;
    near.push(fc.array(invalid(s.items ?? {}, ctx, name, depth + 1), { minLength: 1, maxLength: 3 }));
    if (max <= 1_000) near.push(fc.constant(Array.from({ length: max + 1 }, () => '00000000-0000-4000-8000-000000000000')));
  }
  if ((types.includes('object') || s.properties) && depth < 2) {
    const props = Object.entries((s.properties ?? {}) as Record<string, Schema>);
    const required = (s.required ?? []) as string[];
    const whole = valid(s, ctx, name, depth) as fc.Arbitrary<Record<string, unknown>>;
    if (props.length > 0) {
      // one property made invalid, the rest valid
      near.push(
        fc
          .tuple(whole, fc.integer({ min: 0, max: props.length - 1 }))
          .chain(([obj, i]) => invalid(props[i]![1], ctx, props[i]![0], depth + 1).map((bad) => ({ ...obj, [props[i]![0]]: bad }))),
      );
    }
    if (required.length > 0) near.push(whole.map((obj) => Object.fromEntries(Object.entries(obj).filter(([k]) => k !== required[0]))));
    near.push(whole.map((obj) => ({ ...obj, unknownField: 1 })));
    near.push(fc.constant(Object.fromEntries(Array.from({ length: 2_000 }, (_, i) => [`k${i}`, i]))));
  }
  return fc.oneof(...near);
}
