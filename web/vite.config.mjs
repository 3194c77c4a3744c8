// Vite config of the web app. `npm run build` (scripts/build.mjs) builds it into dist/web, which the
// server serves at /; `npm run dev:web` serves it with hot reload and forwards the API to a server
// started with `npm run dev` (ATRIUM_DEV_API, default http://127.0.0.1:8080).
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = path.dirname(fileURLToPath(import.meta.url));
const api = process.env.ATRIUM_DEV_API ?? 'http://127.0.0.1:8080';

export default defineConfig({
  root: here,
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
