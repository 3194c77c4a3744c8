// `npm run build` (also run by `npm install` through `prepare`): compile src/ to dist/ with the
// same relative layout, copy what the compiled code reads beside itself at run time
// (db/client.js resolves ./migrations relative to import.meta.url), and prepare the embedded
// database's seed (dist/db/seed/pglite: initialised and migrated, no instance data) so a first
// start copies it instead of running initdb; then build the web app (web/, Vite) into dist/web,
// which the server serves at /.
//
//   node scripts/build.mjs [--out-dir <dir>] [--no-web]   (default dist/; tests build elsewhere)
import { cpSync, rmSync, statSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({ options: { 'out-dir': { type: 'string' }, 'no-web': { type: 'boolean' } } });
const out = path.resolve(root, values['out-dir'] ?? 'dist');
// Stale output of renamed or deleted modules must not linger.
rmSync(out, { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
execFileSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json'), '--outDir', out], { stdio: 'inherit' });
// Every non-TypeScript file under src/ (SQL migrations and their journal today) goes to the same
// place under the output; documentation stays behind.
cpSync(path.join(root, 'src'), out, {
  recursive: true,
  filter: (from) => statSync(from).isDirectory() || !/\.(ts|md)$/.test(from),
});
// The entry points (server and command line) bundled, each into one file in place of its tsc
// output: start-up spent about two thirds of its module loading resolving and reading the few
// hundred files of the application and its packages (measured in BENCHMARKS.md, "Start-up").
// Dynamic imports inside a bundle stay lazy (esbuild defers their evaluation), and the packages
// below stay outside it: they find files beside themselves (PGlite's WebAssembly, the Swagger UI
// pages), are loaded only on first use (provider SDKs, tokenizer data, document extractors — the
// ingestion worker, dist/ingest/worker.js, is not bundled), or are optional native add-ons.
// The rest of dist/ stays as tsc wrote it (the build below and the worker import it).
const { build } = await import('esbuild');
const EXTERNAL = [
  '@electric-sql/pglite',
  '@electric-sql/pglite/*',
  '@electric-sql/pglite-pgvector',
  '@fastify/swagger-ui',
  'gpt-tokenizer',
  'gpt-tokenizer/*',
  'openai',
  'openai/*',
  '@anthropic-ai/sdk',
  '@anthropic-ai/sdk/*',
  '@google/genai',
  'unpdf',
  'mammoth',
  'pg-native',
  'ajv',
  'ajv-formats',
  'tsx',
  'tsx/*',
  // required only on first use (Fastify's inject, the response serializers): outside, they cost no parsing at start-up
  'light-my-request',
  '@fastify/fast-json-stringify-compiler',
  'fast-json-stringify',
  'fast-json-stringify/*',
];
// Split at dynamic imports: main.js stays small so the port (and /healthz) is up before the
// application's code is even parsed; the application and the database layer are chunks beside it
// (in dist/ itself, so their import.meta.url resolves like the entry's: see src/paths.ts).
await build({
  entryPoints: ['main', 'cli'].map((e) => path.join(out, `${e}.js`)),
  outdir: out,
  allowOverwrite: true,
  bundle: true,
  splitting: true,
  chunkNames: 'chunk-[hash]',
  platform: 'node',
  format: 'esm',
  target: 'node20',
  external: EXTERNAL,
  sourcemap: 'linked',
  // Less to parse at start-up (TypeBox alone is ~0.9 MB unminified); names kept for stack traces
  // and for the plugin names Fastify reports. `node --enable-source-maps` maps traces to src/.
  minify: true,
  keepNames: true,
  // CommonJS packages inside an ESM bundle call require() for Node's own modules.
  banner: { js: "import { createRequire as __atriumRequire } from 'node:module'; const require = __atriumRequire(import.meta.url);" },
  logLevel: 'warning',
});
// The seed is made by the compiled code itself, with the installed PGlite and these migrations.
const { openDatabase, SEED_DIR } = await import(pathToFileURL(path.join(out, 'db', 'client.js')).href);
const database = await openDatabase({ databaseUrl: null, dataDir: path.dirname(SEED_DIR) });
await database.close();

// The web app: static files, hashed names under assets/. Vite is imported only here so that a
// server-only build (--no-web) does not need it.
if (!values['no-web']) {
  const { build } = await import('vite');
  await build({ configFile: path.join(root, 'web', 'vite.config.mjs'), logLevel: 'warn', build: { outDir: path.join(out, 'web'), emptyOutDir: true } });
}
