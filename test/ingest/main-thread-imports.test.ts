/**
 * The server's main thread must not load the document parsers: only the ingestion workers do
 * (src/ingest/worker.ts). Walks the static, non-type import graph from the app's entry points.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';

const SRC = path.join(import.meta.dirname, '..', '..', 'src');
const PARSERS = ['unpdf', 'mammoth', 'html-to-text', 'htmlparser2', 'tesseract.js'];
const IMPORT = /^\s*(?:import|export)\s+(?!type\b)(?:[^'"]*?\sfrom\s+)?['"]([^'"]+)['"]/gm;

function packagesReachedFrom(entries: string[]): Map<string, string> {
  const seen = new Set<string>();
  const packages = new Map<string, string>(); // package → first file importing it
  const stack = [...entries];
  while (stack.length > 0) {
    const file = stack.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const m of readFileSync(file, 'utf8').matchAll(IMPORT)) {
      const spec = m[1]!;
      if (spec.startsWith('.')) {
        const ts = path.resolve(path.dirname(file), spec).replace(/\.js$/, '.ts');
        if (existsSync(ts)) stack.push(ts);
      } else if (!packages.has(spec)) {
        packages.set(spec, path.relative(SRC, file));
      }
    }
  }
  return packages;
}

it('the main thread imports no document parser; the worker does', () => {
  const main = packagesReachedFrom([path.join(SRC, 'main.ts'), path.join(SRC, 'app.ts'), path.join(SRC, 'cli.ts')].filter(existsSync));
  expect(main.has('fastify')).toBe(true); // the walk does follow the graph
  for (const p of PARSERS) expect(main.get(p), `${p} is imported on the main thread`).toBeUndefined();
  const worker = packagesReachedFrom([path.join(SRC, 'ingest', 'worker.ts')]);
  for (const p of PARSERS) expect(worker.has(p), p).toBe(true);
});
