/**
 * What the image pool's callers need of images (types, limits, refusals) without loading the
 * inspector: the main thread never imports inspect.ts (or image-size), only the workers do.
 */

export type ImageMime = 'image/png' | 'image/jpeg' | 'image/webp' | 'image/gif';
export const IMAGE_MIME_TYPES: readonly ImageMime[] = ['image/png', 'image/jpeg', 'image/webp', 'image/gif'];

export interface ImageLimits {
  /** bytes of one image */
  maxBytes: number;
  /** pixels of either side (of the image and of every frame) */
  maxSide: number;
  /** frames of an animated image */
  maxFrames: number;
}

export const IMAGE_LIMITS: Readonly<ImageLimits> = Object.freeze({ maxBytes: 10 * 1_048_576, maxSide: 8192, maxFrames: 1000 });

export interface ImageInfo {
  mimeType: ImageMime;
  width: number;
  height: number;
  frames: number;
}

/** unsupported: not one of the four types (415); corrupt: cut short or inconsistent (400); too_large: over a limit (413). */
export type ImageErrorKind = 'unsupported' | 'corrupt' | 'too_large';

export class ImageError extends Error {
  override readonly name = 'ImageError';
  constructor(
    readonly kind: ImageErrorKind,
    message: string,
  ) {
    super(message);
  }
}
