import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectStatus, type paths } from '../helpers/api.js';
import { expectProblem, newTeam, startTestApp, type TeamFixture, type TestApp } from '../helpers/app.js';
import { createModel, createWorkspace } from '../helpers/factories.js';
import { parseSse } from '../helpers/sse.js';
import { fixtureImage, gifWithFrames, png, truncatedJpeg } from '../support/image-fixtures.js';
import { imagesOfRequest } from '../support/standin-images.js';
import { useStandIn, type StandInKind } from '../support/use-standin.js';

/** Images sent to vision models: each protocol's form, storage, history, visibility, refusals. */
const s = useStandIn();
let t: TestApp;

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

async function setup(kind: StandInKind = 'OPENAI', model: Record<string, unknown> = {}, ws: Record<string, unknown> = {}, team?: TeamFixture) {
  const tm = team ?? (await newTeam(t));
  const m = await createModel(t, tm.ownerKey, { ...s.modelBody(kind), hasVision: true, ...model });
  const w = await createWorkspace(t, tm.ownerKey, { modelIds: [m.id], ...ws });
  return { team: tm, model: m, ws: w };
}

const b64 = (b: Buffer) => b.toString('base64');
type Completion = paths['/api/v1/chat/{workspaceId}/completions']['post']['requestBody']['content']['application/json'];
const complete = (key: string, workspaceId: string, body: Completion) =>
  t.api(key).POST('/api/v1/chat/{workspaceId}/completions', { params: { path: { workspaceId } }, body });
const thread = async (key: string, workspaceId: string, threadId: string) =>
  expectStatus(await t.api(key).GET('/api/v1/chat/{workspaceId}/history/{threadId}', { params: { path: { workspaceId, threadId } } }), 200);
const image = (key: string, imageId: string) => t.api(key).GET('/api/v1/chat/images/{imageId}', { params: { path: { imageId } }, parseAs: 'arrayBuffer' });

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
      const answer = expectStatus(res, 200);
      expect(answer.message.content).toBe('Echo: What is in these? (saw 2 images)');
      const sent = s.standIn.requests.at(-1)!;
      const carried = imagesOfRequest(sent.protocol, sent.body);
      expect(carried.map((c) => c.mimeType)).toEqual(['image/png', 'image/jpeg']);
      expect(carried[0]!.bytes.equals(pngBytes)).toBe(true);
      expect(carried[1]!.bytes.equals(jpgBytes)).toBe(true);

      const threadId = answer.threadId;
      const user = (await thread(team.ownerKey, ws.id, threadId)).messages[0]!;
      expect(user.images).toEqual([
        { id: expect.any(String), mimeType: 'image/png', width: 16, height: 16 },
        { id: expect.any(String), mimeType: 'image/jpeg', width: 16, height: 16 },
      ]);
      const got = await image(team.ownerKey, user.images![1]!.id);
      const bytes = Buffer.from(expectStatus(got, 200) as unknown as ArrayBuffer);
      expect(got.response.headers.get('content-type')).toBe('image/jpeg');
      expect(got.response.headers.get('x-content-type-options')).toBe('nosniff');
      expect(bytes.equals(jpgBytes)).toBe(true);

      // History keeps them: the next turn sends the earlier user turn with its images again.
      const next = await complete(team.ownerKey, ws.id, { threadId, prompt: 'And now?' });
      expect(expectStatus(next, 200).message.content).toBe('Echo: And now?');
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
    const next = await complete(team.ownerKey, ws.id, { threadId: expectStatus(first, 200).threadId, modelId: blind.id, prompt: 'Go on' });
    expectStatus(next, 200);
    const sent = s.standIn.requests.at(-1)!;
    expect(sent.protocol).toBe('anthropic');
    expect(JSON.stringify(sent.body)).toContain('See this');
    expect(JSON.stringify(sent.body)).not.toContain(b64(fixtureImage('png')));
  });

  it('streamed: the images go with the turn and are stored with the user message', async () => {
    const { team, ws } = await setup('ANTHROPIC');
    const webp = fixtureImage('webp');
    const res = await t.api(team.ownerKey).POST('/api/v1/chat/{workspaceId}/completions/stream', {
      params: { path: { workspaceId: ws.id } },
      body: { prompt: 'Describe', images: [{ mimeType: 'image/webp', data: b64(webp) }] },
      parseAs: 'text',
    });
    const events = parseSse(expectStatus(res, 200) as unknown as string);
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
    expect((await thread(team.ownerKey, ws.id, threadId)).messages[0]!.images![0]).toMatchObject({ mimeType: 'image/webp', width: 16, height: 16 });
  });

  it('counts the images in the prompt: a provider that reports no usage is billed the protocol’s image tokens', async () => {
    const { team, ws } = await setup('OPENAI');
    s.standIn.set({ noUsage: true });
    const text = await complete(team.ownerKey, ws.id, { prompt: 'Look' });
    const withImage = await complete(team.ownerKey, ws.id, { prompt: 'Look', images: [{ mimeType: 'image/gif', data: b64(fixtureImage('gif')) }] });
    // OpenAI's rule for a 16 × 16 image: one 512-px tile, 85 + 170 tokens.
    expect(expectStatus(withImage, 200).usage.promptTokens - expectStatus(text, 200).usage.promptTokens).toBe(255);
  });
});

describe('refusals, before anything is stored', () => {
  async function refused(payload: Partial<Completion>, status: number, code: string, kind: StandInKind = 'OPENAI', model: Record<string, unknown> = {}) {
    const { team, ws } = await setup(kind, model);
    const before = s.standIn.requests.length;
    const res = await complete(team.ownerKey, ws.id, { prompt: 'hi', ...payload });
    expect(expectProblem(res, status).code).toBe(code);
    expect(s.standIn.requests.length).toBe(before);
    const history = await t.api(team.ownerKey).GET('/api/v1/chat/{workspaceId}/history', { params: { path: { workspaceId: ws.id } } });
    expect(expectStatus(history, 200)).toEqual([]);
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
  it('nine images: 413', () => refused({ images: Array.from({ length: 9 }, () => img('image/png', fixtureImage('png')).images[0]!) }, 413, 'too_many_images'));

  it('/healthz keeps answering while hostile images are read', async () => {
    const { team, ws } = await setup();
    const hostile = [png(100_000, 100_000), gifWithFrames(10_000), truncatedJpeg(), Buffer.alloc(9 * 1_048_576, 0x89)];
    const turns = Promise.all(hostile.map((b) => complete(team.ownerKey, ws.id, { prompt: 'x', images: [{ mimeType: 'image/png', data: b64(b) }] })));
    const health = await Promise.all(Array.from({ length: 5 }, () => t.request({ method: 'GET', url: '/healthz' })));
    expect(health.map((h) => h.statusCode)).toEqual([200, 200, 200, 200, 200]);
    const statuses = (await turns).map((r) => r.response.status);
    expect(statuses.every((c) => c >= 400 && c < 500)).toBe(true);
  });
});

describe('who may read an image', () => {
  it('another team, or a member under per-user history, gets exactly the 404 of a missing image', async () => {
    const { team, ws } = await setup('OPENAI', {}, { chatHistoryType: 'USER' });
    const member = await team.addUser('member');
    const res = await complete(team.ownerKey, ws.id, { prompt: 'mine', images: [{ mimeType: 'image/png', data: b64(fixtureImage('png')) }] });
    const id = expectStatus(res, 200).threadId;
    const imageId = (await thread(team.ownerKey, ws.id, id)).messages[0]!.images![0]!.id;
    const stranger = await newTeam(t);
    const missing = '00000000-0000-4000-8000-000000000000';
    for (const key of [member.key, stranger.ownerKey]) {
      const denied = await image(key, imageId);
      const none = await image(key, missing);
      expectProblem(denied, 404);
      // the same bytes (the error is the body parsed; serialised again it keeps the server's order)
      expect(JSON.stringify(denied.error)).toBe(JSON.stringify(none.error));
    }
    expectStatus(await image(team.ownerKey, imageId), 200);
    // deleting the thread deletes its images
    await t.api(team.ownerKey).DELETE('/api/v1/chat/{workspaceId}/history/{threadId}', { params: { path: { workspaceId: ws.id, threadId: id } } });
    expectProblem(await image(team.ownerKey, imageId), 404);
  });
});
