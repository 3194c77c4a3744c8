import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/client.js';
import type { StoredImage } from '../../db/schema/chat.js';
import { AppError, badRequest, type FieldError } from '../../errors.js';
import { IMAGE_MIME_TYPES, ImageError, type ImageLimits } from '../../media/types.js';
import type { ImagePool } from '../../media/pool.js';
import { imageTokens } from '../../media/tokens.js';
import { providerBadResponse } from '../../providers/errors.js';
import type { ApiBase, ChatMessage, ImageContent } from '../../providers/types.js';
import { ChatImagesRepo, type ImageRow } from './images-repo.js';
import type { Outcome } from './provider-call.js';
import type { HistoryMessage } from './repo.js';
import type { TurnEvent } from './turns.js';

/**
 * Images in a turn (docs/API.md, "Images"): a user's images for a vision model, read and checked
 * in the image worker pool (src/media/) before anything is stored, counted in the prompt by the
 * turn's protocol, stored with their message in the turn's own statements (images-repo.ts) and
 * sent again with the history; an image model's answer read the same way. The bytes are only
 * ever decoded in the pool's workers.
 */

/** At most this many images in one request. */
export const MAX_IMAGES_PER_TURN = 8;

/** The JSON body a turn with images may need: 8 images of 10 MB in base64, and 2 MiB for the rest. */
export const IMAGE_TURN_BODY_BYTES = MAX_IMAGES_PER_TURN * Math.ceil((10 * 1_048_576) / 3) * 4 + 2 * 1_048_576;

/** An image as a request carries it: a declared type and base64 bytes. */
export interface RequestImage {
  mimeType: string;
  data: string;
}

/** A turn's planned messages with what images need from the plan. */
export interface ImagePlan {
  newTurns: ChatMessage[];
  model: { hasVision: boolean; imageGen: boolean };
  target: { apiBase: ApiBase };
}

export class ChatImages {
  private readonly repo = new ChatImagesRepo();
  /** the images this process read (only those are stored: never one a client named by id) */
  private readonly read = new WeakSet<ImageContent>();

  constructor(
    private readonly db: Db,
    private readonly pool: ImagePool,
  ) {}

  get limits(): ImageLimits {
    return this.pool.limits;
  }

  /**
   * Step 1 of a turn, after planning: the request's `images` join its question (the last user
   * turn), and every image of the new turns is read in the pool and replaced by what it really is
   * (type, dimensions, canonical base64, its tokens). Throws 4xx AppErrors; stores nothing.
   */
  async readTurnImages(plan: ImagePlan, requestImages: RequestImage[] | undefined, questionIndex: number): Promise<void> {
    // The request's `images` come after any its question carries itself (a /v1 message's parts).
    const all = plan.newTurns.flatMap((m, i) => (m.images ?? []).map((img) => ({ turn: i, img, path: `body/messages/${i}/content` })));
    (requestImages ?? []).forEach((img, j) => all.push({ turn: questionIndex, img, path: `body/images/${j}` }));
    if (all.length === 0) return;
    if (!plan.model.hasVision) {
      throw badRequest('model_lacks_vision', 'This model does not take images: choose a model with vision', [
        { path: all[0]!.path, message: 'the model has no vision' },
      ]);
    }
    if (all.length > MAX_IMAGES_PER_TURN) {
      throw new AppError('too_large', 'too_many_images', `A turn may carry at most ${MAX_IMAGES_PER_TURN} images (this one has ${all.length})`);
    }
    const maxText = Math.ceil(this.limits.maxBytes / 3) * 4 + 1024;
    for (const a of all) {
      if (!(IMAGE_MIME_TYPES as readonly string[]).includes(a.img.mimeType)) {
        throw new AppError('unsupported_media_type', 'unsupported_image_type', 'Images must be PNG, JPEG, WebP or GIF', [
          { path: a.path, message: `${a.img.mimeType.slice(0, 100)} is not image/png, image/jpeg, image/webp or image/gif` },
        ]);
      }
      if (a.img.data.length > maxText) throw imageRefusal(new ImageError('too_large', `An image may have at most ${this.limits.maxBytes} bytes`), a.path);
    }
    const read = await Promise.allSettled(all.map((a) => this.pool.inspect(a.img.data)));
    const apiBase = plan.target.apiBase;
    const byTurn = new Map<number, ImageContent[]>();
    read.forEach((r, k) => {
      const a = all[k]!;
      if (r.status === 'rejected') throw imageRefusal(r.reason, a.path);
      const got = r.value;
      if (got.info.mimeType !== a.img.mimeType) {
        throw new AppError('unsupported_media_type', 'image_type_mismatch', `The image is ${got.info.mimeType}, not ${a.img.mimeType}`, [
          { path: a.path, message: 'the bytes are not of the declared type' },
        ]);
      }
      const { width, height } = got.info;
      const img: ImageContent = { id: randomUUID(), mimeType: got.info.mimeType, data: got.base64, width, height, tokens: imageTokens(apiBase, width, height) };
      this.read.add(img);
      byTurn.set(a.turn, [...(byTurn.get(a.turn) ?? []), img]);
    });
    plan.newTurns = plan.newTurns.map((m, i) => (byTurn.has(i) ? { ...m, images: byTurn.get(i)! } : m));
  }

  /** `imagesOnly`: the request wants images. An image model must speak a protocol that makes images (OpenAI-compatible /images/generations, Gemini): Anthropic's does not. */
  assertCanAnswer(plan: ImagePlan, imagesOnly: boolean): void {
    if (imagesOnly && !plan.model.imageGen) {
      throw badRequest('model_not_image_model', 'This model makes no images: name a model with imageGen', [{ path: 'body/model', message: 'has no imageGen' }]);
    }
    if (plan.model.imageGen && plan.target.apiBase === 'ANTHROPIC') {
      throw badRequest('image_generation_unsupported', 'This model is marked imageGen, but the Anthropic protocol makes no images: clear imageGen');
    }
  }

  /**
   * The images of an answer (an image model's) read in the pool, ready for statement 2, with the
   * `image` events that follow it. An image that cannot be read fails the turn as a bad provider
   * response (nothing of it is stored).
   */
  async readAnswer(
    outcome: Outcome,
    messageId: string,
    created: Date,
  ): Promise<{ outcome: Outcome; images: StoredImage[] | null; rows: ImageRow[]; events: Array<Extract<TurnEvent, { type: 'image' }>> }> {
    const made = outcome.kind === 'answered' ? (outcome.images ?? []) : [];
    if (made.length === 0) return { outcome, images: null, rows: [], events: [] };
    try {
      const read = await this.readGenerated(made, messageId, created);
      const data = new Map(read.contents.map((c) => [c.id!, c.data]));
      const events = read.images.map((i) => ({ type: 'image' as const, ...i, data: data.get(i.id) ?? '' }));
      return { outcome, images: read.images, rows: read.rows, events };
    } catch {
      return {
        outcome: { kind: 'failed', content: outcome.content, error: providerBadResponse('an image that could not be read') },
        images: null,
        rows: [],
        events: [],
      };
    }
  }

  /** A message's images as statement 1 stores them: the column's list and the rows with their bytes. */
  storedOf(m: ChatMessage, messageId: string, created: Date): { images: StoredImage[] | null; rows: ImageRow[] } {
    if (!m.images?.length) return { images: null, rows: [] };
    return this.rowsOf(m.images, messageId, created);
  }

  /**
   * The thread's earlier messages as prompt messages: a user's images go again to a vision model
   * (their bytes loaded once the prompt is fitted, `loadBytes`); a model without vision, and every
   * assistant message, gets the text alone.
   */
  history(h: readonly HistoryMessage[], plan: ImagePlan): ChatMessage[] {
    return h.map((m) => {
      const base: ChatMessage = { role: m.role, content: m.content };
      if (!m.images?.length || m.role !== 'user' || !plan.model.hasVision) return base;
      const images = m.images.map((i) => ({ ...i, data: '', tokens: imageTokens(plan.target.apiBase, i.width, i.height) }));
      return { ...base, images };
    });
  }

  /** The bytes of the stored images the fitted prompt kept (one read, only when there are any). */
  async loadBytes(messages: readonly ChatMessage[]): Promise<void> {
    const missing = messages.flatMap((m) => (m.images ?? []).filter((i) => i.data === '' && i.id));
    if (missing.length === 0) return;
    const found = await this.repo.base64Of(this.db, [...new Set(missing.map((i) => i.id!))]);
    for (const i of missing) i.data = found.get(i.id!) ?? '';
    // An image deleted meanwhile (its thread was) is not sent.
    for (const m of messages) if (m.images) m.images = m.images.filter((i) => i.data !== '');
  }

  /** An image model's images read like a user's (a provider's bytes are not trusted either), ready for statement 2. */
  private async readGenerated(
    images: readonly ImageContent[],
    messageId: string,
    created: Date,
  ): Promise<{ images: StoredImage[]; rows: ImageRow[]; contents: ImageContent[] }> {
    const read = await Promise.all(images.map((i) => this.pool.inspect(i.data)));
    const contents = read.map((got) => {
      const img: ImageContent = { id: randomUUID(), mimeType: got.info.mimeType, data: got.base64, width: got.info.width, height: got.info.height };
      this.read.add(img);
      return img;
    });
    const out = this.rowsOf(contents, messageId, created);
    return { images: out.images ?? [], rows: out.rows, contents };
  }

  /** An image's bytes with the thread it belongs to, within the caller's team (the chat then checks the thread). */
  find(teamId: string, id: string) {
    return this.repo.find(this.db, teamId, id);
  }

  private rowsOf(images: readonly ImageContent[], messageId: string, created: Date): { images: StoredImage[] | null; rows: ImageRow[] } {
    const stored: StoredImage[] = [];
    const rows: ImageRow[] = [];
    for (const i of images) {
      if (!this.read.has(i) || !i.id) continue;
      const s = { id: i.id, mimeType: i.mimeType, width: i.width ?? 0, height: i.height ?? 0 };
      stored.push(s);
      rows.push({ ...s, messageId, base64: i.data, bytes: base64Bytes(i.data), created });
    }
    return { images: stored.length ? stored : null, rows };
  }
}

/** A refused image as the answer: not an image 415, damaged 400, over a limit 413. */
function imageRefusal(err: unknown, path: string): AppError {
  if (!(err instanceof ImageError)) return err instanceof AppError ? err : new AppError('bad_request', 'invalid_image', 'The image could not be read');
  const errors: FieldError[] = [{ path, message: err.message }];
  if (err.kind === 'unsupported') return new AppError('unsupported_media_type', 'unsupported_image_type', err.message, errors);
  if (err.kind === 'too_large') return new AppError('too_large', 'image_too_large', err.message, errors);
  return badRequest('invalid_image', err.message, errors);
}

/** The number of bytes canonical base64 stands for. */
function base64Bytes(b64: string): number {
  const pad = b64.endsWith('==') ? 2 : b64.endsWith('=') ? 1 : 0;
  return (b64.length / 4) * 3 - pad;
}
