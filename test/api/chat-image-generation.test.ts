import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectStatus, type paths, type Schemas } from '../helpers/api.js';
import { expectProblem, newTeam, startTestApp, type TestApp } from '../helpers/app.js';
import { createModel, createWorkspace } from '../helpers/factories.js';
import { parseSse } from '../helpers/sse.js';
import { fixtureImage } from '../support/image-fixtures.js';
import { imagesOfRequest, STANDIN_IMAGE } from '../support/standin-images.js';
import { useStandIn, type StandInKind } from '../support/use-standin.js';

/** Image models (the answer is an image) and images on the OpenAI-compatible API. */
const s = useStandIn();
let t: TestApp;

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

async function setup(kind: StandInKind, model: Record<string, unknown> = { imageGen: true }) {
  const team = await newTeam(t);
  const m = await createModel(t, team.ownerKey, { ...s.modelBody(kind), ...model });
  const ws = await createWorkspace(t, team.ownerKey, { modelIds: [m.id] });
  return { team, model: m, ws };
}
const complete = (key: string, workspaceId: string, body: { prompt: string }) =>
  t.api(key).POST('/api/v1/chat/{workspaceId}/completions', { params: { path: { workspaceId } }, body });
/** The bytes of a stored image, with its answer. */
const image = async (key: string, imageId: string) => {
  const res = await t.api(key).GET('/api/v1/chat/images/{imageId}', { params: { path: { imageId } }, parseAs: 'arrayBuffer' });
  return { res: res.response, bytes: Buffer.from(expectStatus(res, 200) as unknown as ArrayBuffer) };
};
const history = async (key: string, workspaceId: string) =>
  expectStatus(await t.api(key).GET('/api/v1/chat/{workspaceId}/history', { params: { path: { workspaceId } } }), 200);
const messagesOf = async (key: string, workspaceId: string, threadId: string) =>
  expectStatus(await t.api(key).GET('/api/v1/chat/{workspaceId}/history/{threadId}', { params: { path: { workspaceId, threadId } } }), 200).messages;

describe('an image model answers with an image', () => {
  it('OpenAI-compatible: /images/generations with b64_json; the image is stored with the answer and billed 1,000 tokens', async () => {
    const { team, ws } = await setup('OPENAI');
    const res = await complete(team.ownerKey, ws.id, { prompt: 'Draw a blue square' });
    const a = expectStatus(res, 200);
    const sent = s.standIn.requests.at(-1)!;
    expect(sent.path).toBe('/v1/images/generations');
    expect(sent.body).toMatchObject({ model: 'gpt-test', prompt: 'Draw a blue square', n: 1, response_format: 'b64_json' });
    expect(a.message.images).toEqual([{ id: expect.any(String), mimeType: 'image/png', width: 4, height: 3 }]);
    expect(a.usage.completionTokens).toBe(1000);
    const got = await image(team.ownerKey, a.message.images![0]!.id);
    expect(got.res.headers.get('content-type')).toBe('image/png');
    expect(got.bytes.equals(STANDIN_IMAGE)).toBe(true);
    const msgs = await messagesOf(team.ownerKey, ws.id, a.threadId);
    expect(msgs[1]!.images).toEqual(a.message.images);
  });

  it('the ledger charges an image at the model’s price: 1,000 output tokens at chatCredits when the provider counts none', async () => {
    const { team, ws, model } = await setup('OPENAI', { imageGen: true, chatCredits: 300 });
    const a = expectStatus(await complete(team.ownerKey, ws.id, { prompt: 'Draw two dots' }), 200);
    const rows = expectStatus(await t.api(team.ownerKey).GET('/api/v1/usage', { params: { query: { groupBy: 'model' } } }), 200);
    const prompt = a.usage.promptTokens;
    expect(rows).toEqual([{ key: model.id, requests: 1, promptTokens: prompt, completionTokens: 1000, credits: ((prompt + 1000) * 300) / 1000 }]);
  });

  it('takes the provider’s own count when it reports one', async () => {
    const { team, ws } = await setup('AZURE');
    s.standIn.set({ imageUsage: { input: 7, output: 4160 } });
    const a = expectStatus(await complete(team.ownerKey, ws.id, { prompt: 'Draw' }), 200);
    expect(s.standIn.requests.at(-1)!.path).toMatch(/^\/openai\/deployments\/my-deployment\/images\/generations\?/);
    expect(a.usage).toEqual({ promptTokens: 7, completionTokens: 4160, totalTokens: 4167 });
  });

  it('streamed: an image event names each image before done', async () => {
    const { team, ws } = await setup('OPENAI');
    const res = await t
      .api(team.ownerKey)
      .POST('/api/v1/chat/{workspaceId}/completions/stream', { params: { path: { workspaceId: ws.id } }, body: { prompt: 'Draw' }, parseAs: 'text' });
    const events = parseSse(expectStatus(res, 200) as unknown as string);
    expect(events.map((e) => e.event)).toEqual(['start', 'image', 'done']);
    expect(events[1]!.data).toEqual({ type: 'image', id: expect.any(String), mimeType: 'image/png', width: 4, height: 3 });
    expect((await image(team.ownerKey, events[1]!.data.id as string)).bytes.equals(STANDIN_IMAGE)).toBe(true);
  });

  it('Gemini: image output asked with responseModalities, its inlineData stored beside the text', async () => {
    const { team, ws } = await setup('GOOGLE');
    const a = expectStatus(await complete(team.ownerKey, ws.id, { prompt: 'Draw a tree' }), 200);
    const sent = s.standIn.requests.at(-1)!;
    expect(sent.path).toMatch(/:generateContent$/);
    expect(sent.body.generationConfig.responseModalities).toEqual(['TEXT', 'IMAGE']);
    expect(a.message.content).toBe('Echo: Draw a tree');
    expect(a.message.images).toHaveLength(1);
    expect((await image(team.ownerKey, a.message.images![0]!.id)).bytes.equals(STANDIN_IMAGE)).toBe(true);
  });

  it('an Anthropic model marked imageGen is refused with 400 (its protocol makes no images)', async () => {
    const { team, ws } = await setup('ANTHROPIC');
    expect(expectProblem(await complete(team.ownerKey, ws.id, { prompt: 'Draw' }), 400).code).toBe('image_generation_unsupported');
    expect(s.standIn.requests).toHaveLength(0);
  });

  it('bytes from the provider that are no image fail the turn (502), and no image is stored', async () => {
    const { team, ws } = await setup('OPENAI');
    s.standIn.set({ generatedImage: Buffer.from('<html>not an image</html>') });
    const res = await complete(team.ownerKey, ws.id, { prompt: 'Draw' });
    expect(expectProblem(res, 502).code).toBe('provider_bad_response');
    const threads = await history(team.ownerKey, ws.id);
    const msgs = await messagesOf(team.ownerKey, ws.id, threads[0]!.id);
    expect(msgs[1]!.status).toBe('error');
    expect(msgs[1]!.images).toBeUndefined();
  });
});

describe('/v1', () => {
  type ImageBody = paths['/v1/images/generations']['post']['requestBody']['content']['application/json'];
  type ChatBody = paths['/v1/chat/completions']['post']['requestBody']['content']['application/json'];
  const generate = (key: string, body: ImageBody) => t.api(key).POST('/v1/images/generations', { body });
  const chat = (key: string, body: ChatBody) => t.api(key).POST('/v1/chat/completions', { body });

  it('/v1/images/generations answers b64_json from a workspace’s image model; a chat model is refused', async () => {
    const { team, ws, model } = await setup('OPENAI');
    const res = await generate(team.ownerKey, { model: `workspace/${ws.id}/${model.id}`, prompt: 'A red dot', response_format: 'b64_json' });
    const body = expectStatus(res, 200);
    expect(body.data).toEqual([{ b64_json: STANDIN_IMAGE.toString('base64') }]);
    expect(body.usage!.output_tokens).toBe(1000);
    const chatOnly = await setup('OPENAI', {});
    const refused = await generate(chatOnly.team.ownerKey, { model: `workspace/${chatOnly.ws.id}`, prompt: 'A red dot' });
    expect(refused.response.status).toBe(400);
    expect(refused.error!.error.code).toBe('model_not_image_model');
  });

  it('/v1/chat/completions: image_url data URLs reach a vision model as its protocol’s images; web addresses and non-vision models are refused', async () => {
    const { team, ws } = await setup('GOOGLE', { hasVision: true });
    const jpg = fixtureImage('jpg');
    const parts = [
      { type: 'text' as const, text: 'What is this?' },
      { type: 'image_url' as const, image_url: { url: `data:image/jpeg;base64,${jpg.toString('base64')}` } },
    ];
    const res = await chat(team.ownerKey, { model: `workspace/${ws.id}`, messages: [{ role: 'user', content: parts }] });
    // a plain answer (the document's 200 is also the streamed chunk)
    expect((expectStatus(res, 200) as Schemas['OpenAIChatCompletion']).choices[0]!.message.content).toBe('Echo: What is this? (saw 1 image)');
    const carried = imagesOfRequest('gemini', s.standIn.requests.at(-1)!.body);
    expect(carried).toHaveLength(1);
    expect(carried[0]!.mimeType).toBe('image/jpeg');
    expect(carried[0]!.bytes.equals(jpg)).toBe(true);

    const web = await chat(team.ownerKey, {
      model: `workspace/${ws.id}`,
      messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/cat.png' } }] }],
    });
    expect(web.response.status).toBe(400);
    expect(web.error!.error.code).toBe('image_url_unsupported');

    const plain = await setup('OPENAI', {});
    const blind = await chat(plain.team.ownerKey, { model: `workspace/${plain.ws.id}`, messages: [{ role: 'user', content: parts }] });
    expect(blind.response.status).toBe(400);
    expect(blind.error!.error.code).toBe('model_lacks_vision');
  });
});
