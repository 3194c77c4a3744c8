import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, newTeam, startTestApp, type TeamFixture, type TestApp } from '../helpers/app.js';
import { createModel, createWorkspace } from '../helpers/factories.js';
import { parseSse } from '../helpers/sse.js';
import { fixtureImage, gifWithFrames, png, truncatedJpeg } from '../support/image-fixtures.js';
import { imagesOfRequest } from '../support/standin-images.js';
import { useStandIn, type StandInKind } from '../support/use-standin.js';

/** Images sent to vision models: each protocol's form, storage, history, visibility, refusals. */
const s = useStandIn();
let t: TestApp;
let baseUrl: string;

beforeAll(async () => {
  t = await startTestApp();
  baseUrl = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(() => t.close());

async function setup(kind: StandInKind = 'OPENAI', model: Record<string, unknown> = {}, ws: Record<string, unknown> = {}, team?: TeamFixture) {
  const tm = team ?? (await newTeam(t));
  const m = await createModel(t, tm.ownerKey, { ...s.modelBody(kind), hasVision: true, ...model });
  const w = await createWorkspace(t, tm.ownerKey, { modelIds: [m.id], ...ws });
  return { team: tm, model: m, ws: w };
}

const b64 = (b: Buffer) => b.toString('base64');
const complete = (key: string, wsId: string, payload: object) => t.request({ method: 'POST', url: `/api/v1/chat/${wsId}/completions`, key, payload });
const thread = (key: string, wsId: string, id: string) => t.request({ method: 'GET', url: `/api/v1/chat/${wsId}/history/${id}`, key });
const imageUrl = (id: string) => `/api/v1/chat/images/${id}`;

describe('a vision model receives the images in its protocol’s form', () => {
  const kinds: StandInKind[] = ['OPENAI', 'AZURE', 'ANTHROPIC', 'GOOGLE'];
  for (const kind of kinds) {
    it(`${kind}: the exact bytes reach the provider, the thread keeps them, a follow-up sends them again`, async () => {
      const { team, ws } = await setup(kind);
      const pngBytes = fixtureImage('png');
      const jpgBytes = fixtureImage('jpg');
      const res = await complete(team.ownerKey, ws.id, {
        prompt: 'What is in these?',
        images: [
          { mimeType: 'image/png', data: b64(pngBytes) },
          { mimeType: 'image/jpeg', data: b64(jpgBytes) },
        ],
      });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().message.content).toBe('Echo: What is in these? (saw 2 images)');
      const sent = s.standIn.requests.at(-1)!;
      const carried = imagesOfRequest(sent.protocol, sent.body);
      expect(carried.map((c) => c.mimeType)).toEqual(['image/png', 'image/jpeg']);
      expect(carried[0]!.bytes.equals(pngBytes)).toBe(true);
      expect(carried[1]!.bytes.equals(jpgBytes)).toBe(true);

      const threadId = res.json().threadId as string;
      const user = (await thread(team.ownerKey, ws.id, threadId)).json().messages[0];
      expect(user.images).toEqual([
        { id: expect.any(String), mimeType: 'image/png', width: 16, height: 16 },
        { id: expect.any(String), mimeType: 'image/jpeg', width: 16, height: 16 },
      ]);
      const got = await t.request({ method: 'GET', url: imageUrl(user.images[1].id), key: team.ownerKey });
      expect(got.statusCode).toBe(200);
      expect(got.headers['content-type']).toBe('image/jpeg');
      expect(got.headers['x-content-type-options']).toBe('nosniff');
      expect(got.rawPayload.equals(jpgBytes)).toBe(true);

      // History keeps them: the next turn sends the earlier user turn with its images again.
      const next = await complete(team.ownerKey, ws.id, { threadId, prompt: 'And now?' });
      expect(next.statusCode).toBe(200);
      expect(next.json().message.content).toBe('Echo: And now?');
      const again = JSON.stringify(s.standIn.requests.at(-1)!.body);
      expect(again).toContain(b64(pngBytes));
      expect(again).toContain(b64(jpgBytes));
    });
  }

  it('a follow-up on a model without vision sends the history’s text alone', async () => {
    const team = await newTeam(t);
    const seeing = await createModel(t, team.ownerKey, { ...s.modelBody('OPENAI'), hasVision: true });
    const blind = await createModel(t, team.ownerKey, { ...s.modelBody('ANTHROPIC'), hasVision: false });
    const ws = await createWorkspace(t, team.ownerKey, { modelIds: [seeing.id, blind.id] });
    const first = await complete(team.ownerKey, ws.id, { prompt: 'See this', images: [{ mimeType: 'image/png', data: b64(fixtureImage('png')) }] });
    const next = await complete(team.ownerKey, ws.id, { threadId: first.json().threadId, modelId: blind.id, prompt: 'Go on' });
    expect(next.statusCode, next.body).toBe(200);
    const sent = s.standIn.requests.at(-1)!;
    expect(sent.protocol).toBe('anthropic');
    expect(JSON.stringify(sent.body)).toContain('See this');
    expect(JSON.stringify(sent.body)).not.toContain(b64(fixtureImage('png')));
  });

  it('streamed: the images go with the turn and are stored with the user message', async () => {
    const { team, ws } = await setup('ANTHROPIC');
    const webp = fixtureImage('webp');
    const res = await fetch(`${baseUrl}/api/v1/chat/${ws.id}/completions/stream`, {
      method: 'POST',
      headers: { authorization: `Bearer ${team.ownerKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: 'Describe', images: [{ mimeType: 'image/webp', data: b64(webp) }] }),
    });
    const events = parseSse(await res.text());
    expect(events[0]!.event).toBe('start');
    expect(events.at(-1)!.event).toBe('done');
    expect(
      events
        .filter((e) => e.event === 'delta')
        .map((e) => e.data.content as string)
        .join(''),
    ).toBe('Echo: Describe (saw 1 image)');
    const carried = imagesOfRequest('anthropic', s.standIn.requests.at(-1)!.body);
    expect(carried).toHaveLength(1);
    expect(carried[0]!.bytes.equals(webp)).toBe(true);
    const threadId = events[0]!.data.threadId as string;
    expect((await thread(team.ownerKey, ws.id, threadId)).json().messages[0].images[0]).toMatchObject({ mimeType: 'image/webp', width: 16, height: 16 });
  });

  it('counts the images in the prompt: a provider that reports no usage is billed the protocol’s image tokens', async () => {
    const { team, ws } = await setup('OPENAI');
    s.standIn.set({ noUsage: true });
    const text = await complete(team.ownerKey, ws.id, { prompt: 'Look' });
    const withImage = await complete(team.ownerKey, ws.id, { prompt: 'Look', images: [{ mimeType: 'image/gif', data: b64(fixtureImage('gif')) }] });
    expect(withImage.statusCode).toBe(200);
    // OpenAI's rule for a 16 × 16 image: one 512-px tile, 85 + 170 tokens.
    expect(withImage.json().usage.promptTokens - text.json().usage.promptTokens).toBe(255);
  });
});

describe('refusals, before anything is stored', () => {
  async function refused(payload: object, status: number, code: string, kind: StandInKind = 'OPENAI', model: Record<string, unknown> = {}) {
    const { team, ws } = await setup(kind, model);
    const before = s.standIn.requests.length;
    const res = await complete(team.ownerKey, ws.id, { prompt: 'hi', ...payload });
    expect(expectProblem(res, status).code).toBe(code);
    expect(s.standIn.requests.length).toBe(before);
    expect((await t.request({ method: 'GET', url: `/api/v1/chat/${ws.id}/history`, key: team.ownerKey })).json()).toEqual([]);
  }
  const img = (mimeType: string, data: Buffer | string) => ({ images: [{ mimeType, data: typeof data === 'string' ? data : b64(data) }] });

  it('a model without vision: 400 model_lacks_vision', () =>
    refused(img('image/png', fixtureImage('png')), 400, 'model_lacks_vision', 'OPENAI', { hasVision: false }));
  it('bytes that are no image: 415', () => refused(img('image/png', Buffer.from('just some text, not an image')), 415, 'unsupported_image_type'));
  it('a type it does not take: 415', () => refused(img('image/bmp', fixtureImage('png')), 415, 'unsupported_image_type'));
  it('bytes of another type than declared: 415', () => refused(img('image/png', fixtureImage('jpg')), 415, 'image_type_mismatch'));
  it('data that is not base64: 400', () => refused(img('image/png', '###not base64###'), 400, 'invalid_image'));
  it('a truncated JPEG: 400', () => refused(img('image/jpeg', truncatedJpeg()), 400, 'invalid_image'));
  it('a PNG header claiming 100,000 × 100,000 px: 413', () => refused(img('image/png', png(100_000, 100_000)), 413, 'image_too_large'));
  it('a PNG over 8,192 px a side: 413', () => refused(img('image/png', png(8193, 2)), 413, 'image_too_large'));
  it('a GIF with 10,000 frames: 413', () => refused(img('image/gif', gifWithFrames(10_000)), 413, 'image_too_large'));
  it('an image over 10 MB: 413', () => refused(img('image/png', Buffer.alloc(10 * 1_048_576 + 1, 1)), 413, 'image_too_large'));
  it('nine images: 413', () => refused({ images: Array.from({ length: 9 }, () => img('image/png', fixtureImage('png')).images[0]) }, 413, 'too_many_images'));

  it('/healthz keeps answering while hostile images are read', async () => {
    const { team, ws } = await setup();
    const hostile = [png(100_000, 100_000), gifWithFrames(10_000), truncatedJpeg(), Buffer.alloc(9 * 1_048_576, 0x89)];
    const turns = Promise.all(hostile.map((b) => complete(team.ownerKey, ws.id, { prompt: 'x', images: [{ mimeType: 'image/png', data: b64(b) }] })));
    const health = await Promise.all(Array.from({ length: 5 }, () => t.request({ method: 'GET', url: '/healthz' })));
    expect(health.map((h) => h.statusCode)).toEqual([200, 200, 200, 200, 200]);
    const statuses = (await turns).map((r) => r.statusCode);
    expect(statuses.every((c) => c >= 400 && c < 500)).toBe(true);
  });
});

describe('who may read an image', () => {
  it('another team, or a member under per-user history, gets exactly the 404 of a missing image', async () => {
    const { team, ws } = await setup('OPENAI', {}, { chatHistoryType: 'USER' });
    const member = await team.addUser('member');
    const res = await complete(team.ownerKey, ws.id, { prompt: 'mine', images: [{ mimeType: 'image/png', data: b64(fixtureImage('png')) }] });
    const id = res.json().threadId as string;
    const imageId = (await thread(team.ownerKey, ws.id, id)).json().messages[0].images[0].id as string;
    const stranger = await newTeam(t);
    const missing = '00000000-0000-4000-8000-000000000000';
    for (const key of [member.key, stranger.ownerKey]) {
      const denied = await t.request({ method: 'GET', url: imageUrl(imageId), key });
      const none = await t.request({ method: 'GET', url: imageUrl(missing), key });
      expectProblem(denied, 404);
      expect(denied.body).toBe(none.body);
    }
    expect((await t.request({ method: 'GET', url: imageUrl(imageId), key: team.ownerKey })).statusCode).toBe(200);
    // deleting the thread deletes its images
    await t.request({ method: 'DELETE', url: `/api/v1/chat/${ws.id}/history/${id}`, key: team.ownerKey });
    expectProblem(await t.request({ method: 'GET', url: imageUrl(imageId), key: team.ownerKey }), 404);
  });
});
