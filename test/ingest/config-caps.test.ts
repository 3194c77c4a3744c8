/** The ingestion variables of src/config.ts (README's table). */
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { DEFAULT_LIMITS, LIMIT_VARIABLES } from '../../src/ingest/index.js';

describe('ingestion configuration', () => {
  it('defaults to the documented caps, the same as the ingest module defaults', () => {
    const { ingest } = loadConfig({});
    expect(ingest).toEqual({ workers: 2, workerMaxMemoryMb: 512, timeoutMs: 60_000, ocrTimeoutMs: 600_000, ...DEFAULT_LIMITS });
    expect(Object.isFrozen(ingest)).toBe(true);
  });

  it('parses every variable named in refusals', () => {
    const env = {
      INGEST_WORKERS: '3',
      [LIMIT_VARIABLES.memoryMb]: '256',
      [LIMIT_VARIABLES.timeoutMs]: '5000',
      [LIMIT_VARIABLES.maxPdfPages]: '10',
      [LIMIT_VARIABLES.maxInflatedMemberBytes]: '2048',
      [LIMIT_VARIABLES.maxInflatedTotalBytes]: '4096',
      [LIMIT_VARIABLES.maxChars]: '1000',
      [LIMIT_VARIABLES.maxChunks]: '7',
      [LIMIT_VARIABLES.maxOcrPages]: '4',
      [LIMIT_VARIABLES.maxOcrPixels]: '50000',
      [LIMIT_VARIABLES.ocrTimeoutMs]: '9000',
    };
    expect(loadConfig(env).ingest).toEqual({
      workers: 3,
      workerMaxMemoryMb: 256,
      timeoutMs: 5000,
      maxPdfPages: 10,
      maxInflatedMemberBytes: 2048,
      maxInflatedTotalBytes: 4096,
      maxChars: 1000,
      maxChunks: 7,
      maxOcrPages: 4,
      maxOcrPixels: 50_000,
      ocrTimeoutMs: 9000,
    });
  });

  it('refuses nonsense, naming the variable', () => {
    for (const [name, value] of [
      ['INGEST_WORKERS', '0'],
      ['INGEST_MAX_PDF_PAGES', 'many'],
      ['INGEST_WORKER_MAX_MEMORY_MB', '8'],
      ['INGEST_TIMEOUT_MS', '-1'],
      ['INGEST_OCR_MAX_PAGES', '0'],
      ['INGEST_OCR_MAX_PIXELS', 'big'],
      ['INGEST_OCR_TIMEOUT_MS', '10'],
    ]) {
      expect(() => loadConfig({ [name!]: value })).toThrow(ConfigError);
      expect(() => loadConfig({ [name!]: value })).toThrow(name);
    }
  });
});
