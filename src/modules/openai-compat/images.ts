import { badRequest } from '../../errors.js';
import type { ImageContent } from '../../providers/types.js';

/**
 * OpenAI's `image_url` content parts as a turn's images (docs/API.md, "Images"): a `data:` URL
 * with base64 bytes. A remote `http(s)` URL is refused (400 `image_url_unsupported`): Atrium
 * fetches nothing on a client's behalf. The bytes are then read and checked like any image of a
 * turn (modules/chat/images.ts).
 */

const DATA_URL = /^data:([a-z0-9.+/-]+)(?:;[a-z0-9-]+=[^;,]*)*;base64,/i;

export function imageOfPart(part: { image_url?: unknown }, path: string): ImageContent {
  const raw = part.image_url;
  const url = typeof raw === 'string' ? raw : raw && typeof raw === 'object' ? (raw as { url?: unknown }).url : undefined;
  if (typeof url !== 'string' || !url) {
    throw badRequest('validation_failed', 'An image_url part needs image_url.url', [{ path: `${path}/image_url/url`, message: 'is required' }]);
  }
  const m = DATA_URL.exec(url);
  if (m) return { mimeType: m[1]!.toLowerCase(), data: url.slice(m[0].length) };
  const remote = /^https?:/i.test(url);
  throw badRequest(
    remote ? 'image_url_unsupported' : 'validation_failed',
    remote ? 'Images by URL are not fetched: send the image as a data URL (data:image/png;base64,…)' : 'image_url.url must be a base64 data URL',
    [{ path: `${path}/image_url/url`, message: remote ? 'must be a data URL, not a web address' : 'must be data:<type>;base64,<data>' }],
  );
}
