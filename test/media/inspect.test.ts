import { describe, expect, it } from 'vitest';
import { inspectImage } from '../../src/media/inspect.js';
import { imageTokens } from '../../src/media/tokens.js';
import { IMAGE_LIMITS, ImageError } from '../../src/media/types.js';
import { fixtureImage, gifWithFrames, png } from '../support/image-fixtures.js';

/** The image inspector (run in the image workers) and each protocol's image-token rule. */
function refusal(b: Uint8Array, limits = IMAGE_LIMITS): string {
  try {
    inspectImage(b, limits);
  } catch (err) {
    if (err instanceof ImageError) return err.kind;
    throw err;
  }
  return 'accepted';
}

describe('inspectImage', () => {
  it('reads real PNG, JPEG, GIF and WebP files by their bytes', () => {
    const types = { png: 'image/png', jpg: 'image/jpeg', gif: 'image/gif', webp: 'image/webp' } as const;
    for (const [ext, mimeType] of Object.entries(types)) {
      expect(inspectImage(fixtureImage(ext as keyof typeof types))).toEqual({ mimeType, width: 16, height: 16, frames: 1 });
    }
  });

  it('refuses every real file cut short, and a PNG whose chunk fails its checksum', () => {
    for (const ext of ['png', 'jpg', 'gif', 'webp'] as const) {
      const b = fixtureImage(ext);
      for (const cut of [b.length - 1, Math.floor(b.length / 2), 30]) expect(refusal(b.subarray(0, cut)), `${ext} cut at ${cut}`).toBe('corrupt');
    }
    const bad = Buffer.from(png(3, 3));
    bad[bad.length - 20] = bad[bad.length - 20]! ^ 0xff; // inside IDAT
    expect(refusal(bad)).toBe('corrupt');
  });

  it('counts frames and refuses over the limits: sides, frames, bytes', () => {
    expect(inspectImage(gifWithFrames(3)).frames).toBe(3);
    expect(refusal(gifWithFrames(IMAGE_LIMITS.maxFrames + 1))).toBe('too_large');
    expect(refusal(png(100_000, 100_000))).toBe('too_large');
    expect(refusal(png(8192, 1))).toBe('accepted');
    expect(refusal(png(1, 8193))).toBe('too_large');
    expect(refusal(png(2, 2), { ...IMAGE_LIMITS, maxBytes: 10 })).toBe('too_large');
  });

  it('refuses what is none of the four types', () => {
    expect(refusal(Buffer.from('%PDF-1.7 not an image'))).toBe('unsupported');
    expect(refusal(Buffer.from([0x42, 0x4d, 0, 0, 0, 0]))).toBe('unsupported'); // BMP
  });
});

describe('imageTokens', () => {
  it('follows each protocol’s published rule', () => {
    // OpenAI: 1024² → 768² → 4 tiles → 85 + 4 × 170; a small image is one tile
    expect(imageTokens('OPENAI', 1024, 1024)).toBe(765);
    expect(imageTokens('OPENAI', 16, 16)).toBe(255);
    expect(imageTokens('OPENAI', 4096, 8192)).toBe(85 + 170 * 2 * 3); // → 1024 × 2048 → 768 × 1536
    // Anthropic: w × h / 750, the long edge first scaled to 1568
    expect(imageTokens('ANTHROPIC', 1000, 1000)).toBe(1334);
    expect(imageTokens('ANTHROPIC', 3136, 3136)).toBe(Math.ceil((1568 * 1568) / 750));
    // Gemini: 258 up to 384 px a side, else 258 a tile
    expect(imageTokens('GOOGLE', 384, 200)).toBe(258);
    expect(imageTokens('GOOGLE', 1024, 1024)).toBe(258 * 4);
  });
});
