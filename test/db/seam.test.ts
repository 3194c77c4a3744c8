import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { INTERNALS, SEAM_ONLY } from '../../src/db/driver.js';

/**
 * The one seam to the database (db/driver.ts): no other file of src/ names an internal it lists
 * or a public API it keeps to itself, and the packages whose internals it relies upon are pinned
 * exactly, to the version each internal was checked against.
 */
const ROOT = path.join(import.meta.dirname, '..', '..');
const SEAM = path.join('src', 'db', 'driver.ts');
const patterns = [...Object.values(INTERNALS).flatMap((i) => (i.pattern ? [i.pattern] : [])), ...SEAM_ONLY];

function sources(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'migrations' ? [] : sources(rel);
    return /\.(ts|tsx|js|mjs)$/.test(e.name) ? [rel] : [];
  });
}

/** `file:line: text` of each line of `text` that one of the patterns finds. */
function violations(file: string, text: string): string[] {
  return text.split('\n').flatMap((line, i) => (patterns.some((p) => p.test(line)) ? [`${file}:${i + 1}: ${line.trim()}`] : []));
}

describe('the database seam', () => {
  it('no file of src/ but db/driver.ts reaches a driver or drizzle internal, or runs a statement itself', () => {
    const found = sources('src')
      .filter((f) => f !== SEAM)
      .flatMap((f) => violations(f, readFileSync(path.join(ROOT, f), 'utf8')));
    expect(found).toEqual([]);
  });

  it('finds what the seam replaced (lines as they stood in src/ before it)', () => {
    const before = [
      'const client = (db as unknown as DrizzleSession).session.client;',
      'const built = d.dialect.sqlToQuery(query);',
      'return (await d.session.prepareQuery(built, undefined, name, false).execute()) as { rows: Row[] };',
      'd.session.logger?.logQuery(built.sql, built.params);',
      'await pg._checkReady();',
      'return pg._runExclusiveTransaction(() =>',
      'pg._runExclusiveQuery(async () => {',
      'const { messages } = await pg.execProtocol(message, { syncToFs: write, throwOnError: true });',
      'return mod.parse.parseResults(messages as never, pg.parsers as never)[0]?.rows ?? [];',
      "const { rows } = await query('select max(created_at) as last from drizzle.__drizzle_migrations');",
      'const res = (await db.execute(sql`select 1`)) as unknown as { rows: Array<{ n: number }> };',
      'await tx.execute(sql`select 1`);',
      'const client = db.$client;',
    ];
    for (const line of before) expect(violations('x.ts', line), line).toHaveLength(1);
    expect(violations('x.ts', 'const rows = await execute<{ n: number }>(db, sql`select 1`);\nawait executePrepared(db, q);')).toEqual([]);
  });

  it('pins each package whose internals it relies upon, exactly, to the version checked', () => {
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    for (const internal of Object.values(INTERNALS)) {
      expect(pkg.dependencies[internal.package], internal.package).toBe(internal.version);
      const installed = JSON.parse(readFileSync(path.join(ROOT, 'node_modules', internal.package, 'package.json'), 'utf8')) as { version: string };
      expect(installed.version, internal.package).toBe(internal.version);
    }
    // drizzle-kit writes the migrations drizzle-orm's migrator applies: pinned too
    expect(pkg.devDependencies['drizzle-kit']).toMatch(/^\d+\.\d+\.\d+$/);
  });
});
