// Vite config of the web app. `npm run build` (scripts/build.mjs) builds it into dist/web, which the
// server serves at /; `npm run dev:web` serves it with hot reload and forwards the API to a server
// started with `npm run dev` (ATRIUM_DEV_API, default http://127.0.0.1:8080).
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { defineConfig } from 'vite';

const here = path.dirname(fileURLToPath(import.meta.url));
const api = process.env.ATRIUM_DEV_API ?? 'http://127.0.0.1:8080';

/** Text files worth sending compressed; the server picks `<file>.br` or `.gz` by Accept-Encoding (src/http/web-app.ts). */
const COMPRESSIBLE = /\.(?:js|css|html|svg|json|txt|webmanifest)$/;

/** Write a brotli (best quality: done once, at build) and a gzip copy beside each text file of the build. */
function precompress() {
  let outDir = '';
  return {
    name: 'atrium-precompress',
    apply: 'build',
    configResolved(c) {
      outDir = c.build.outDir;
    },
    closeBundle() {
      const walk = (dir) =>
        readdirSync(dir).flatMap((n) => {
          const p = path.join(dir, n);
          return statSync(p).isDirectory() ? walk(p) : [p];
        });
      for (const file of walk(outDir).filter((f) => COMPRESSIBLE.test(f))) {
        const bytes = readFileSync(file);
        if (bytes.length < 1024) continue;
        writeFileSync(
          `${file}.br`,
          brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length } }),
        );
        writeFileSync(`${file}.gz`, gzipSync(bytes, { level: 9 }));
      }
    },
  };
}

/**
 * The service worker (web/service-worker.js) as dist/web/sw.js, with the list of the build's files to
 * keep (the shell: index.html at `/`, scripts, styles, icons) and a version that changes with them.
 */
function serviceWorker() {
  let outDir = '';
  return {
    name: 'atrium-service-worker',
    apply: 'build',
    configResolved(c) {
      outDir = c.build.outDir;
    },
    // After the bundle is written (Vite drops chunks that held only styles while it finishes): the files as they are.
    closeBundle() {
      const walk = (dir) =>
        readdirSync(dir).flatMap((n) => {
          const p = path.join(dir, n);
          return statSync(p).isDirectory() ? walk(p) : [path.relative(outDir, p).split(path.sep).join('/')];
        });
      const files = walk(outDir).filter((f) => f !== 'index.html' && f !== 'sw.js' && !/\.(?:br|gz|map)$/.test(f));
      const shell = ['/', ...files.map((f) => `/${f}`)].sort();
      // A new version whenever a kept file changes (public files keep their names).
      const hash = createHash('sha256');
      for (const f of files) hash.update(f).update(readFileSync(path.join(outDir, f)));
      const version = hash.digest('hex').slice(0, 16);
      const source = readFileSync(path.join(here, 'service-worker.js'), 'utf8').replace('__VERSION__', version).replace('__SHELL__', JSON.stringify(shell));
      writeFileSync(path.join(outDir, 'sw.js'), source);
    },
  };
}

export default defineConfig({
  root: here,
  plugins: [serviceWorker(), precompress()],
  base: '/',
  // JSX compiles to Preact's automatic runtime (no React, no plugin needed).
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: path.resolve(here, '../dist/web'),
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    // The first screen loads only what it shows; the chat's Markdown and highlighting come with it.
    modulePreload: { polyfill: false },
  },
  server: { proxy: { '/api': { target: api, changeOrigin: false }, '/v1': api, '/healthz': api } },
});
