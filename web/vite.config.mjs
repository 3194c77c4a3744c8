// Vite config of the web app. `npm run build` (scripts/build.mjs) builds it into dist/web, which the
// server serves at /; `npm run dev:web` serves it with hot reload and forwards the API to a server
// started with `npm run dev` (ATRIUM_DEV_API, default http://127.0.0.1:8080).
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

export default defineConfig({
  root: here,
  plugins: [precompress()],
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
