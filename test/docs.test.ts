/**
 * The docs name only paths that exist: every repository path written in a Markdown file (in
 * backticks, or a bare `src/…`-style path) resolves to a file or folder of this checkout. A path
 * may be written from the repository's root, from `src/`, `src/modules/`, `web/src/` or `test/`,
 * or from the document's own folder. The docs also cite nothing outside the repository.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BASES = ['', 'src', 'src/modules', 'web/src', 'test'];
const SKIP_DIRS = new Set(['node_modules', 'dist', '.git', 'data']);

function filesUnder(dir: string, keep: (name: string) => boolean): string[] {
  return readdirSync(dir).flatMap((name) => {
    if (SKIP_DIRS.has(name) || name.startsWith('.')) return [];
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) return filesUnder(p, keep);
    return keep(name) ? [p] : [];
  });
}

const markdownFiles = (dir: string) => filesUnder(dir, (name) => name.endsWith('.md') && name !== 'BENCHMARKS.md');
/** Source, tests, benchmarks, scripts and migrations: their comments cite nothing outside the repository either. */
const codeFiles = () =>
  ['src', 'web/src', 'test', 'bench', 'scripts'].flatMap((d) =>
    filesUnder(path.join(ROOT, d), (name) => /\.(ts|tsx|mjs|js|sql)$/.test(name) && name !== 'openapi.d.ts' && name !== 'docs.test.ts'),
  );
const CITATION = /CONTRACT\.md|CONTRACT §|\b[Ii]ssue \d+\b|\.\.\/shared\//;

function citations(files: string[]): string[] {
  return files.flatMap((file) =>
    readFileSync(file, 'utf8')
      .split('\n')
      .map((line, i) => [line, i + 1] as const)
      .filter(([line]) => CITATION.test(line))
      .map(([, n]) => `${path.relative(ROOT, file)}:${n}`),
  );
}

/** Path-like words: in backticks, or bare ones that start at a top-level folder of the repository. */
export function pathsIn(text: string): string[] {
  const found = new Set<string>();
  const candidate = /^(?:\.\.?\/)?[\w.-]+(?:\/[\w.-]+)*\/?$/;
  for (const [, inner] of text.matchAll(/`([^`\n]+)`/g)) {
    const word = inner!.trim();
    if (!word.includes('/') || !candidate.test(word)) continue;
    const last = word.replace(/\/$/, '').split('/').pop()!;
    // a file (has an extension) or a folder (trailing slash); not a route, a MIME type or a URL
    if (word.endsWith('/') || /\.[a-z]{1,12}$/.test(last)) found.add(word);
  }
  for (const [, word] of text.matchAll(/(?:^|[\s(])((?:src|web|test|bench|scripts|docs)\/[\w./-]*[\w/])/gm)) found.add(word!);
  return [...found].filter((w) => {
    const first = w.split('/')[0]!;
    // build output, installed packages and variables (DATA_DIR/…, CODE_ROOT/…) are not in a checkout
    return !['dist', 'node_modules', '..'].includes(first) && !/^[A-Z_]+$/.test(first) && !w.startsWith('./data');
  });
}

function resolves(doc: string, word: string): boolean {
  const plain = word.replace(/^\.\//, '');
  return [...BASES.map((b) => path.join(ROOT, b, plain)), path.join(path.dirname(doc), plain)].some((p) => existsSync(p));
}

describe('docs', () => {
  const docs = markdownFiles(ROOT).filter((f) => !f.includes(`${path.sep}fixtures${path.sep}`));

  it('finds the documents and the paths in them', () => {
    expect(docs.map((d) => path.relative(ROOT, d))).toEqual(expect.arrayContaining(['README.md', 'docs/ARCHITECTURE.md', 'docs/API.md']));
    expect(pathsIn('see `src/http/auth.ts`, `http/`, src/app.ts and `text/csv` or `/api/v1/me`')).toEqual(['src/http/auth.ts', 'http/', 'src/app.ts']);
  });

  it('name only paths that exist', () => {
    const missing = docs.flatMap((doc) =>
      pathsIn(readFileSync(doc, 'utf8'))
        .filter((w) => !resolves(doc, w))
        .map((w) => `${path.relative(ROOT, doc)}: ${w}`),
    );
    expect(missing).toEqual([]);
  });

  it('cite nothing outside the repository', () => {
    expect(citations(docs)).toEqual([]);
  });

  it('nor does the code', () => {
    const files = codeFiles();
    expect(files.length).toBeGreaterThan(100);
    expect(citations(files)).toEqual([]);
  });
});
