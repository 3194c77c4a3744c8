/**
 * The stand-in provider's image forms (standin-provider.ts): what images a request carried in
 * each protocol's own form, and the image an image model answers with.
 *
 *   OpenAI / Azure   user content parts `{type: "image_url", image_url: {url: "data:<type>;base64,<data>"}}`
 *   Anthropic        user content blocks `{type: "image", source: {type: "base64", media_type, data}}`
 *   Gemini           user parts `{inlineData: {mimeType, data}}`
 *
 * Image generation: `POST /v1/images/generations` (and Azure's deployment / v1 forms) answers
 * `{created, data: [{b64_json}]}` with the `generatedImage` switch's bytes (usage only with
 * `imageUsage`); a Gemini `generateContent` whose `generationConfig.responseModalities` names IMAGE
 * gets an `inlineData` part with them after its text.
 */
import { png } from './image-fixtures.js';

type Json = Record<string, unknown>;

/** The default answer of an image model: a real 4 × 3 PNG. */
export const STANDIN_IMAGE = png(4, 3, [10, 120, 240]);

export interface CarriedImage {
  mimeType: string;
  /** the bytes as they arrived (base64 decoded) */
  bytes: Buffer;
}

/** The images of a request's last user turn, in the protocol's form. */
export function imagesOfRequest(protocol: string, body: Json): CarriedImage[] {
  const out: CarriedImage[] = [];
  if (protocol === 'gemini') {
    const user = (Array.isArray(body.contents) ? (body.contents as Json[]) : []).filter((c) => c.role === undefined || c.role === 'user').at(-1);
    for (const p of Array.isArray(user?.parts) ? (user.parts as Json[]) : []) {
      const d = p.inlineData as { mimeType?: string; data?: string } | undefined;
      if (d?.data) out.push({ mimeType: d.mimeType ?? '', bytes: Buffer.from(d.data, 'base64') });
    }
    return out;
  }
  const user = (Array.isArray(body.messages) ? (body.messages as Json[]) : []).filter((m) => m.role === 'user').at(-1);
  const parts = Array.isArray(user?.content) ? (user.content as Json[]) : [];
  for (const p of parts) {
    if (protocol === 'anthropic' && p.type === 'image') {
      const s = p.source as { type?: string; media_type?: string; data?: string };
      if (s.type === 'base64' && s.data) out.push({ mimeType: s.media_type ?? '', bytes: Buffer.from(s.data, 'base64') });
    } else if (p.type === 'image_url') {
      const url = String((p.image_url as { url?: string } | undefined)?.url ?? '');
      const m = /^data:([^;,]+);base64,(.*)$/s.exec(url);
      if (m) out.push({ mimeType: m[1]!, bytes: Buffer.from(m[2]!, 'base64') });
    }
  }
  return out;
}

/** Whether a Gemini request asks for images in the answer. */
export function wantsImage(body: Json): boolean {
  const modalities = (body.generationConfig as Json | undefined)?.responseModalities;
  return Array.isArray(modalities) && modalities.some((m) => String(m).toUpperCase() === 'IMAGE');
}

/** OpenAI's answer to `/images/generations` (b64_json), with gpt-image style usage when `usage` is given. */
export function imagesGenerationAnswer(image: Buffer, usage: { input: number; output: number } | null): Json {
  return {
    created: Math.floor(Date.now() / 1000),
    data: [{ b64_json: image.toString('base64') }],
    ...(usage ? { usage: { input_tokens: usage.input, output_tokens: usage.output, total_tokens: usage.input + usage.output } } : {}),
  };
}
