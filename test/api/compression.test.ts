/**
 * Large /api/v1 answers go compressed to a client that accepts it; small answers, event streams
 * and the OpenAI-compatible /v1 are sent as they are.
 */
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectStatus } from '../helpers/api.js';
import { newTeam, startTestApp, type TestApp } from '../helpers/app.js';
import { createModel, createWorkspace } from '../helpers/factories.js';
import { useStandIn } from '../support/use-standin.js';

const s = useStandIn();
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

describe('compressed answers', () => {
  it('a long thread comes compressed (brotli or gzip, as accepted) and reads back the same; a small answer and a stream do not', async () => {
    const team = await newTeam(t);
    const model = await createModel(t, team.ownerKey, { url: s.standIn.openaiBaseUrl });
    const ws = await createWorkspace(t, team.ownerKey, { modelIds: [model.id] });
    s.standIn.set({ reply: Array.from({ length: 1500 }, (_, i) => `word${i % 40}`).join(' ') });
    const api = t.api(team.ownerKey);
    const workspace = { workspaceId: ws.id };
    const first = await api.POST('/api/v1/chat/{workspaceId}/completions', { params: { path: workspace }, body: { prompt: 'talk a lot' } });
    const threadId = expectStatus(first, 200).threadId;
    // the answer's bytes as sent: the in-process fetch hands them over as they are, compressed or not
    const thread = async (acceptEncoding?: string) => {
      const res = await api.GET('/api/v1/chat/{workspaceId}/history/{threadId}', {
        params: { path: { ...workspace, threadId } },
        headers: acceptEncoding ? { 'accept-encoding': acceptEncoding } : {},
        parseAs: 'arrayBuffer',
      });
      return { headers: res.response.headers, bytes: Buffer.from(expectStatus(res, 200) as unknown as ArrayBuffer) };
    };

    const plain = await thread();
    expect(plain.headers.get('content-encoding')).toBeNull();
    const plainText = plain.bytes.toString();
    expect(plainText.length).toBeGreaterThan(8 * 1024);
    const br = await thread('gzip, deflate, br');
    expect(br.headers.get('content-encoding')).toBe('br');
    expect(JSON.parse(brotliDecompressSync(br.bytes).toString())).toEqual(JSON.parse(plainText));
    expect(br.bytes.length).toBeLessThan(plainText.length / 2);
    const gz = await thread('gzip');
    expect(gz.headers.get('content-encoding')).toBe('gzip');
    expect(JSON.parse(gunzipSync(gz.bytes).toString())).toEqual(JSON.parse(plainText));

    const small = await api.GET('/api/v1/me', { headers: { 'accept-encoding': 'br, gzip' } });
    expectStatus(small, 200);
    expect(small.response.headers.get('content-encoding')).toBeNull();

    const streamed = await api.POST('/api/v1/chat/{workspaceId}/completions/stream', {
      params: { path: workspace },
      body: { prompt: 'and again' },
      headers: { 'accept-encoding': 'br, gzip' },
      parseAs: 'text',
    });
    expect(streamed.response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(streamed.response.headers.get('content-encoding')).toBeNull();
    expect(expectStatus(streamed, 200)).toContain('event: done');

    const v1 = await api.POST('/v1/chat/completions', {
      body: { model: `workspace/${ws.id}`, messages: [{ role: 'user', content: 'once more' }] },
      headers: { 'accept-encoding': 'br, gzip' },
    });
    expectStatus(v1, 200);
    expect(v1.response.headers.get('content-encoding')).toBeNull();
  });
});
