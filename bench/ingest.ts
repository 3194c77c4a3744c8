/**
 * Ingestion throughput benchmark.
 *
 * Measures, in the same run and on the same text, MB/s of `ingestDocument` (detection,
 * decoding, normalisation, structure-aware chunking, exact token counts per chunk) against
 * MB/s of ONE plain o200k_base `encode()` of the whole text — the floor cost of touching
 * every token once. Target: ingestion ≥ 0.33× the plain encode speed.
 *
 * Corpora (real public text on a Debian machine + this project's node_modules), deduplicated
 * by content and capped at CORPUS_BYTES each:
 *   - text:     /usr/share/common-licenses/* and /usr/share/doc/<pkg>/copyright
 *   - markdown: node_modules/<pkg>/README.md (plus /usr/share/doc/<pkg>/*.md)
 * Both fall back to the fixtures in test/fixtures if the machine has too little.
 *
 * Run alone: npx tsx bench/ingest.ts
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { encode } from 'gpt-tokenizer/encoding/o200k_base';
import { TOKEN_ENCODING } from '../src/ingest/index.js';
import { ingestDocument } from '../src/ingest/pipeline.js';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const CORPUS_BYTES = 2 * 1024 * 1024;
const REPEATS = 3;

interface Corpus {
  name: string;
  filename: string;
  text: string;
  files: number;
}

function listFiles(dir: string, pick: (name: string) => boolean, depth = 1): string[] {
  const out: string[] = [];
  let entries: string[];
  try {
    entries = readdirSync(dir).sort();
  } catch {
    return out;
  }
  for (const e of entries) {
    const p = join(dir, e);
    let st;
    try {
      st = statSync(p);
    } catch {
      continue;
    }
    if (st.isDirectory() && depth > 0) out.push(...listFiles(p, pick, depth - 1));
    else if (st.isFile() && st.size > 200 && st.size < 512 * 1024 && pick(e)) out.push(p);
  }
  return out;
}

function buildCorpus(name: string, filename: string, paths: string[], fallback: string[]): Corpus {
  const seen = new Set<string>();
  const parts: string[] = [];
  let bytes = 0;
  let files = 0;
  for (const p of [...paths, ...fallback]) {
    if (bytes >= CORPUS_BYTES) break;
    let buf: Buffer;
    try {
      buf = readFileSync(p);
    } catch {
      continue;
    }
    if (buf.includes(0)) continue;
    const hash = createHash('sha1').update(buf).digest('hex');
    if (seen.has(hash)) continue;
    seen.add(hash);
    const text = buf.toString('utf8');
    if (text.includes('\uFFFD')) continue;
    parts.push(text);
    bytes += buf.length;
    files++;
  }
  return { name, filename, text: parts.join('\n\n'), files };
}

export function loadCorpora(): Corpus[] {
  const fixtures = join(ROOT, 'test/fixtures');
  const text = buildCorpus(
    'text (licences + copyright files)',
    'corpus.txt',
    [...listFiles('/usr/share/common-licenses', () => true, 0), ...listFiles('/usr/share/doc', (n) => n === 'copyright')],
    [join(fixtures, 'gpl-3.txt')],
  );
  const markdown = buildCorpus(
    'markdown (READMEs)',
    'corpus.md',
    [...listFiles(join(ROOT, 'node_modules'), (n) => n.toLowerCase() === 'readme.md'), ...listFiles('/usr/share/doc', (n) => n.endsWith('.md'))],
    [join(fixtures, 'mammoth-readme.md')],
  );
  return [text, markdown];
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

const PLAIN = { disallowedSpecial: new Set<string>() }; // READMEs may mention "<|endoftext|>"

export async function benchIngest(): Promise<{ name: string; rows: Array<Record<string, string | number>>; notes: string }> {
  const rows: Array<Record<string, string | number>> = [];
  for (const corpus of loadCorpora()) {
    const bytes = new TextEncoder().encode(corpus.text);
    const mb = bytes.length / 1e6;
    // Warm-up: JIT, tokenizer rank tables and merge cache for both paths.
    encode(corpus.text, PLAIN);
    await ingestDocument(bytes, corpus.filename);

    const encodeMs: number[] = [];
    const ingestMs: number[] = [];
    let tokens = 0;
    let chunks = 0;
    let chunkTokens = 0;
    for (let r = 0; r < REPEATS; r++) {
      let t = performance.now();
      tokens = encode(corpus.text, PLAIN).length;
      encodeMs.push(performance.now() - t);
      t = performance.now();
      const doc = await ingestDocument(bytes, corpus.filename);
      ingestMs.push(performance.now() - t);
      chunks = doc.chunks.length;
      chunkTokens = doc.tokenSize;
    }
    const encMbs = mb / (median(encodeMs) / 1000);
    const ingMbs = mb / (median(ingestMs) / 1000);
    rows.push({
      corpus: corpus.name,
      files: corpus.files,
      MB: Number(mb.toFixed(2)),
      tokens,
      chunks,
      'chunk tokens': chunkTokens,
      'encode MB/s': Number(encMbs.toFixed(2)),
      'ingest MB/s': Number(ingMbs.toFixed(2)),
      'ingest/encode': Number((ingMbs / encMbs).toFixed(2)),
    });
  }
  const notes = [
    `Tokenizer: gpt-tokenizer ${TOKEN_ENCODING}. Median of ${REPEATS} runs after one warm-up run of each path, same text, same process.`,
    '"encode" is one plain encode() of the whole text; "ingest" is ingestDocument() on the UTF-8 bytes (detect, decode, normalise, chunk with maxTokens 400 / overlap 50, exact token count per chunk).',
    'Target: ingest/encode ≥ 0.33. "chunk tokens" exceeds "tokens" by the overlap (~50 tokens per chunk).',
    'Corpora: Debian licence/copyright files and node_modules READMEs, deduplicated, ~2 MiB each.',
  ].join(' ');
  return { name: 'Document ingestion throughput', rows, notes };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const result = await benchIngest();
  console.log(`# ${result.name}\n`);
  console.table(result.rows);
  console.log(`\n${result.notes}`);
  if (!existsSync('/usr/share/common-licenses')) console.log('(machine docs missing: fixtures used as corpus)');
}
