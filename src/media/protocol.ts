/** Messages between the image pool (main thread) and its workers. */
import type { ImageErrorKind, ImageInfo, ImageLimits } from './types.js';

export interface ImageJob {
  id: number;
  /** base64 text (a request's image) or the bytes themselves (a provider's answer) */
  data: string | Uint8Array;
  limits: ImageLimits;
}

export type ImageJobResult = { id: number; ok: true; info: ImageInfo; base64: string } | { id: number; ok: false; kind: ImageErrorKind; message: string };
