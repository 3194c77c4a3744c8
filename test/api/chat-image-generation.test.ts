import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, newTeam, startTestApp, type TestApp } from '../helpers/app.js';
import { createModel, createWorkspace } from '../helpers/factories.js';
import { parseSse } from '../helpers/sse.js';
import { fixtureImage } from '../support/image-fixtures.js';
import { imagesOfRequest, STANDIN_IMAGE } from '../support/standin-images.js';
import { useStandIn, type StandInKind } from '../support/use-standin.js';

/** Image models (the answer is an image) and images on the OpenAI-compatible API. */
const s = useStandIn();
let t: TestApp;
let baseUrl: string;

beforeAll(async () => {
  t = await startTestApp();
  baseUrl = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(() => t.close());

async function setup(kind: StandInKind, model: Record<string, unknown> = { imageGen: true }) {
  const team = await newTeam(t);
  const m = await createModel(t, team.ownerKey, { ...s.modelBody(kind), ...model });
  const ws = await createWorkspace(t, team.ownerKey, { modelIds: [m.id] });
  return { team, model: m, ws };
}
const complete = (key: string, wsId: string, payload: object) => t.request({ method: 'POST', url: `/api/v1/chat/${wsId}/completions`, key, payload });
const image = (key: string, id: string) => t.request({ method: 'GET', url: `/api/v1/chat/images/${id}`, key });

describe('an image model answers with an image', () => {
  it('OpenAI-compatible: /images/generations with b64_json; the image is stored with the answer and billed 1,000 tokens', async () => {
    const { team, ws } = await setup('OPENAI');
    const res = await complete(team.ownerKey, ws.id, { prompt: 'Draw a blue square' });
    expect(res.statusCode, res.body).toBe(200);
    const sent = s.standIn.requests.at(-1)!;
    expect(sent.path).toBe('/v1/images/generations');
    expect(sent.body).toMatchObject({ model: 'gpt-test', prompt: 'Draw a blue square', n: 1, response_format: 'b64_json' });
    const a = res.json();
    expect(a.message.images).toEqual([{ id: expect.any(String), mimeType: 'image/png', width: 4, height: 3 }]);
    expect(a.usage.completionTokens).toBe(1000);
    const got = await image(team.ownerKey, a.message.images[0].id);
    expect(got.headers['content-type']).toBe('image/png');
    expect(got.rawPayload.equals(STANDIN_IMAGE)).toBe(true);
    const msgs = (await t.request({ method: 'GET', url: `/api/v1/chat/${ws.id}/history/${a.threadId}`, key: team.ownerKey })).json().messages;
    expect(msgs[1].images).toEqual(a.message.images);
  });

  it('the ledger charges an image at the model’s price: 1,000 output tokens at chatCredits when the provider counts none', async () => {
    const { team, ws, model } = await setup('OPENAI', { imageGen: true, chatCredits: 300 });
    const a = (await complete(team.ownerKey, ws.id, { prompt: 'Draw two dots' })).json();
    const rows = (await t.request({ method: 'GET', url: '/api/v1/usage?groupBy=model', key: team.ownerKey })).json();
    const prompt = a.usage.promptTokens as number;
    expect(rows).toEqual([{ key: model.id, requests: 1, promptTokens: prompt, completionTokens: 1000, credits: ((prompt + 1000) * 300) / 1000 }]);
  });

  it('takes the provider’s own count when it reports one', async () => {
    const { team, ws } = await setup('AZURE');
    s.standIn.set({ imageUsage: { input: 7, output: 4160 } });
    const a = (await complete(team.ownerKey, ws.id, { prompt: 'Draw' })).json();
    expect(s.standIn.requests.at(-1)!.path).toMatch(/^\/openai\/deployments\/my-deployment\/images\/generations\?/);
    expect(a.usage).toEqual({ promptTokens: 7, completionTokens: 4160, totalTokens: 4167 });
  });

  it('streamed: an image event names each image before done', async () => {
    const { team, ws } = await setup('OPENAI');
    const res = await fetch(`${baseUrl}/api/v1/chat/${ws.id}/completions/stream`, {
      method: 'POST',
      headers: { authorization: `Bearer ${team.ownerKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: 'Draw' }),
    });
    const events = parseSse(await res.text());
    expect(events.map((e) => e.event)).toEqual(['start', 'image', 'done']);
    expect(events[1]!.data).toEqual({ type: 'image', id: expect.any(String), mimeType: 'image/png', width: 4, height: 3 });
    expect((await image(team.ownerKey, events[1]!.data.id as string)).rawPayload.equals(STANDIN_IMAGE)).toBe(true);
  });

  it('Gemini: image output asked with responseModalities, its inlineData stored beside the text', async () => {
    const { team, ws } = await setup('GOOGLE');
    const a = (await complete(team.ownerKey, ws.id, { prompt: 'Draw a tree' })).json();
    const sent = s.standIn.requests.at(-1)!;
    expect(sent.path).toMatch(/:generateContent$/);
    expect(sent.body.generationConfig.responseModalities).toEqual(['TEXT', 'IMAGE']);
    expect(a.message.content).toBe('Echo: Draw a tree');
    expect(a.message.images).toHaveLength(1);
    expect((await image(team.ownerKey, a.message.images[0].id)).rawPayload.equals(STANDIN_IMAGE)).toBe(true);
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
    const threads = (await t.request({ method: 'GET', url: `/api/v1/chat/${ws.id}/history`, key: team.ownerKey })).json();
    const msgs = (await t.request({ method: 'GET', url: `/api/v1/chat/${ws.id}/history/${threads[0].id}`, key: team.ownerKey })).json().messages;
    expect(msgs[1].status).toBe('error');
    expect(msgs[1].images).toBeUndefined();
  });
});

describe('/v1', () => {
  const v1 = (key: string, url: string, payload: object) => t.request({ method: 'POST', url: `/v1${url}`, key, payload });

  it('/v1/images/generations answers b64_json from a workspace’s image model; a chat model is refused', async () => {
    const { team, ws, model } = await setup('OPENAI');
    const res = await v1(team.ownerKey, '/images/generations', { model: `workspace/${ws.id}/${model.id}`, prompt: 'A red dot', response_format: 'b64_json' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toEqual([{ b64_json: STANDIN_IMAGE.toString('base64') }]);
    expect(res.json().usage.output_tokens).toBe(1000);
    const chat = await setup('OPENAI', {});
    const refused = await v1(chat.team.ownerKey, '/images/generations', { model: `workspace/${chat.ws.id}`, prompt: 'A red dot' });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().error.code).toBe('model_not_image_model');
  });

  it('/v1/chat/completions: image_url data URLs reach a vision model as its protocol’s images; web addresses and non-vision models are refused', async () => {
    const { team, ws } = await setup('GOOGLE', { hasVision: true });
    const jpg = fixtureImage('jpg');
    const parts = [
      { type: 'text', text: 'What is this?' },
      { type: 'image_url', image_url: { url: `data:image/jpeg;base64,${jpg.toString('base64')}` } },
    ];
    const res = await v1(team.ownerKey, '/chat/completions', { model: `workspace/${ws.id}`, messages: [{ role: 'user', content: parts }] });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().choices[0].message.content).toBe('Echo: What is this? (saw 1 image)');
    const carried = imagesOfRequest('gemini', s.standIn.requests.at(-1)!.body);
    expect(carried).toHaveLength(1);
    expect(carried[0]!.mimeType).toBe('image/jpeg');
    expect(carried[0]!.bytes.equals(jpg)).toBe(true);

    const web = await v1(team.ownerKey, '/chat/completions', {
      model: `workspace/${ws.id}`,
      messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/cat.png' } }] }],
    });
    expect(web.statusCode).toBe(400);
    expect(web.json().error.code).toBe('image_url_unsupported');

    const plain = await setup('OPENAI', {});
    const blind = await v1(plain.team.ownerKey, '/chat/completions', { model: `workspace/${plain.ws.id}`, messages: [{ role: 'user', content: parts }] });
    expect(blind.statusCode).toBe(400);
    expect(blind.json().error.code).toBe('model_lacks_vision');
  });
});
