/**
 * No image is read on the event loop: the main thread's import graph (from the app's entry points)
 * never reaches the inspector or `image-size`; the image worker's does. Static, non-type imports.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';

const SRC = path.join(import.meta.dirname, '..', '..', 'src');
const IMPORT = /^\s*(?:import|export)\s+(?!type\b)(?:[^'"]*?\sfrom\s+)?['"]([^'"]+)['"]/gm;

/** Every source file and package reached from `entries`. */
function reached(entries: string[]): Set<string> {
  const seen = new Set<string>();
  const stack = [...entries];
  while (stack.length > 0) {
    const file = stack.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const m of readFileSync(file, 'utf8').matchAll(IMPORT)) {
      const spec = m[1]!;
      if (!spec.startsWith('.')) seen.add(`package:${spec}`);
      else {
        const ts = path.resolve(path.dirname(file), spec).replace(/\.js$/, '.ts');
        if (existsSync(ts)) stack.push(ts);
      }
    }
  }
  return seen;
}

it('the main thread never loads the image inspector; the image worker does', () => {
  const main = reached(['main.ts', 'app.ts', 'cli.ts'].map((f) => path.join(SRC, f)).filter(existsSync));
  expect(main.has(path.join(SRC, 'media', 'pool.ts'))).toBe(true); // the walk does follow the graph
  expect(main.has(path.join(SRC, 'media', 'inspect.ts'))).toBe(false);
  expect(main.has('package:image-size')).toBe(false);
  const worker = reached([path.join(SRC, 'media', 'worker.ts')]);
  expect(worker.has('package:image-size')).toBe(true);
});
