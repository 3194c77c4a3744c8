import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { CODE_ROOT } from './paths.js';

/** What `new Worker(source, { eval })` is given to run one of Atrium's worker modules. */
export interface WorkerEntry {
  source: string | URL;
  eval: boolean;
}

/**
 * The entry of a worker module, `name` relative to the code root without extension (e.g.
 * 'ingest/worker'). Compiled: `<name>.js` itself. From TypeScript sources (tests via vitest, dev via
 * tsx): a one-line bootstrap that imports `<name>.ts` through tsx's API (a `--import tsx` in the
 * worker's execArgv does not reach the worker's entry on Node 20).
 */
export function workerEntry(name: string): WorkerEntry {
  const js = new URL(`${name}.js`, CODE_ROOT);
  if (existsSync(fileURLToPath(js))) return { source: js, eval: false };
  const api = pathToFileURL(tsxEsmApi()).href;
  const ts = new URL(`${name}.ts`, CODE_ROOT).href;
  return { source: `import(${JSON.stringify(api)}).then((tsx) => tsx.tsImport(${JSON.stringify(ts)}, ${JSON.stringify(ts)}));`, eval: true };
}

/** tsx's ESM API file (require.resolve would give its CommonJS twin, which cannot register hooks here). */
function tsxEsmApi(): string {
  const pkgFile = createRequire(import.meta.url).resolve('tsx/package.json');
  const pkg = JSON.parse(readFileSync(pkgFile, 'utf8')) as { exports: Record<string, { import?: { default?: string } }> };
  const rel = pkg.exports['./esm/api']?.import?.default ?? './dist/esm/api/index.mjs';
  return path.join(path.dirname(pkgFile), rel);
}
