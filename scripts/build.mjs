// `npm run build` (also run by `npm install` through `prepare`): compile src/ to dist/ with the
// same relative layout, then copy what the compiled code reads beside itself at run time
// (db/client.js resolves ./migrations relative to import.meta.url).
import { cpSync, rmSync, statSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(root, 'dist');
// Stale output of renamed or deleted modules must not linger.
rmSync(dist, { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
execFileSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
// Every non-TypeScript file under src/ (SQL migrations and their journal today) goes to the same
// place under dist/; documentation stays behind.
cpSync(path.join(root, 'src'), dist, {
  recursive: true,
  filter: (from) => statSync(from).isDirectory() || !/\.(ts|md)$/.test(from),
});
