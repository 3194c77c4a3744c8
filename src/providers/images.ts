/**
 * Image generation: a turn on a model marked `imageGen` is answered with images (README "Images").
 * - OpenAI-compatible (and Azure): `POST {url}/images/generations` with the question's text as the
 *   `prompt`, `n: 1`, `response_format: b64_json` (the conversation before it is not sent: the
 *   endpoint takes one prompt). Usage is the provider's when it reports one (`input_tokens`,
 *   `output_tokens`), else the prompt's o200k count and {@link UNCOUNTED_IMAGE_TOKENS} per image.
 * - Gemini: `generateContent` with `responseModalities: [TEXT, IMAGE]` and the whole conversation
 *   (google.ts); the answer's `inlineData` parts are the images, its text parts the text.
 * - Anthropic makes no images (the chat refuses such a model before calling).
 * The images come back as the provider sent them: the chat reads and checks them (src/media/).
 */
import { countTokens } from '../ingest/tokens.js';
import { guardedCall, sdkTimeoutMs, usageOf } from './call-control.js';
import { providerBadResponse } from './errors.js';
import { geminiImages } from './google.js';
import { openaiClientFor } from './openai.js';
import type { Completion, ImageContent, ProviderRequest } from './types.js';

/** Output tokens an image counts for when the provider reports none: a model's chatCredits is then its price per image. */
export const UNCOUNTED_IMAGE_TOKENS = 1000;

export async function generateImages(req: ProviderRequest): Promise<Completion> {
  if (req.target.apiBase === 'GOOGLE') return geminiImages(req);
  if (req.target.apiBase !== 'OPENAI') throw providerBadResponse('no images: this protocol makes none');
  const prompt = req.messages.findLast((m) => m.role === 'user')?.content ?? '';
  return guardedCall(req, async (signal) => {
    const client = await openaiClientFor(req.target);
    const res = (await client.images.generate(
      { model: req.target.baseModel, prompt, n: 1, response_format: 'b64_json' },
      { signal, timeout: sdkTimeoutMs(req.timeouts), maxRetries: 0 },
    )) as unknown as { data?: Array<{ b64_json?: unknown; revised_prompt?: unknown }>; usage?: { input_tokens?: number; output_tokens?: number } };
    const images: ImageContent[] = [];
    for (const d of Array.isArray(res?.data) ? res.data : []) {
      if (typeof d?.b64_json === 'string' && d.b64_json) images.push({ mimeType: 'image/png', data: d.b64_json });
    }
    if (images.length === 0) throw providerBadResponse('no image');
    const u = res.usage;
    const usage = u?.output_tokens ? usageOf(u.input_tokens ?? 0, u.output_tokens) : usageOf(countTokens(prompt), UNCOUNTED_IMAGE_TOKENS * images.length);
    return { content: '', images, finishReason: 'stop', usage };
  });
}
