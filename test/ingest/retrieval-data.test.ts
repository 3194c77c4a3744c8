import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ingestDocument } from '../../src/ingest/pipeline.js';
import type { IngestedDocument } from '../../src/ingest/index.js';

const DIR = fileURLToPath(new URL('../../bench/retrieval-data/', import.meta.url));

interface Question {
  id: string;
  file: string;
  question: string;
  expect: string;
}
interface Dataset {
  documents: Array<{ file: string; kind: string }>;
  questions: Question[];
}

const data = JSON.parse(readFileSync(`${DIR}questions.json`, 'utf8')) as Dataset;

async function ingest(file: string, maxTokens?: number): Promise<IngestedDocument> {
  return ingestDocument(new Uint8Array(readFileSync(DIR + file)), file, undefined, maxTokens ? { maxTokens } : undefined);
}

describe('bench/retrieval-data/questions.json', () => {
  it('has ≥ 25 questions over 3–6 documents, unique ids, short expects', () => {
    expect(data.questions.length).toBeGreaterThanOrEqual(25);
    expect(data.documents.length).toBeGreaterThanOrEqual(3);
    expect(data.documents.length).toBeLessThanOrEqual(6);
    expect(new Set(data.questions.map((q) => q.id)).size).toBe(data.questions.length);
    const files = new Set(data.documents.map((d) => d.file));
    for (const q of data.questions) {
      expect(files.has(q.file), q.id).toBe(true);
      const words = q.expect.trim().split(/\s+/).length;
      expect(words, `${q.id} expect length`).toBeGreaterThanOrEqual(4);
      expect(words, `${q.id} expect length`).toBeLessThanOrEqual(12);
      // Phrased differently from the passage: the question does not quote the expect.
      expect(q.question.toLowerCase().includes(q.expect.toLowerCase()), q.id).toBe(false);
    }
  });

  it('documents ingest with the declared kind', async () => {
    for (const d of data.documents) expect((await ingest(d.file)).kind, d.file).toBe(d.kind);
  });

  for (const maxTokens of [400, 200, 800]) {
    it(`every expect is in the normalised text and inside one chunk (maxTokens ${maxTokens})`, async () => {
      const docs = new Map<string, IngestedDocument>();
      for (const d of data.documents) docs.set(d.file, await ingest(d.file, maxTokens));
      for (const q of data.questions) {
        const doc = docs.get(q.file)!;
        expect(doc.processed.includes(q.expect), `${q.id}: "${q.expect}" in normalised ${q.file}`).toBe(true);
        expect(
          doc.chunks.some((c) => c.processed.includes(q.expect)),
          `${q.id}: "${q.expect}" within a single chunk`,
        ).toBe(true);
      }
    });
  }
});
