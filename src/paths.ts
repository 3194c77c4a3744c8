/**
 * The root of the running code: src/ under tsx, dist/ when compiled, and dist/ too when the
 * entry points are bundled into dist/main.js and dist/cli.js (scripts/build.mjs). Files read at
 * run time (migrations, the PGlite seed, the ingestion worker) are found from here, so they
 * resolve the same way in all three layouts — `import.meta.url` of a bundled module is the
 * bundle's, not the source file's.
 */
export const CODE_ROOT = new URL('./', import.meta.url);
