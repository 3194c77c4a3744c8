/**
 * Large /api/v1 answers go compressed to a client that accepts it; small answers, event streams
 * and the OpenAI-compatible /v1 are sent as they are.
 */
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newTeam, startTestApp, type TestApp } from '../helpers/app.js';
import { createModel, createWorkspace } from '../helpers/factories.js';
import { startStandInProvider, type StandInProvider } from '../support/standin-provider.js';

let t: TestApp;
let standIn: StandInProvider;
beforeAll(async () => {
  standIn = await startStandInProvider();
  t = await startTestApp();
});
afterAll(async () => {
  await t.close();
  await standIn.close();
});

describe('compressed answers', () => {
  it('a long thread comes compressed (brotli or gzip, as accepted) and reads back the same; a small answer and a stream do not', async () => {
    const team = await newTeam(t);
    const model = await createModel(t, team.ownerKey, { url: standIn.openaiBaseUrl });
    const ws = await createWorkspace(t, team.ownerKey, { modelIds: [model.id] });
    standIn.set({ reply: Array.from({ length: 1500 }, (_, i) => `word${i % 40}`).join(' ') });
    const first = await t.request({ method: 'POST', url: `/api/v1/chat/${ws.id}/completions`, key: team.ownerKey, payload: { prompt: 'talk a lot' } });
    expect(first.statusCode).toBe(200);
    const threadId = first.json().threadId as string;
    const url = `/api/v1/chat/${ws.id}/history/${threadId}`;

    const plain = await t.request({ method: 'GET', url, key: team.ownerKey });
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body.length).toBeGreaterThan(8 * 1024);
    const br = await t.request({ method: 'GET', url, key: team.ownerKey, headers: { 'accept-encoding': 'gzip, deflate, br' } });
    expect(br.headers['content-encoding']).toBe('br');
    expect(JSON.parse(brotliDecompressSync(br.rawPayload).toString())).toEqual(plain.json());
    expect(br.rawPayload.length).toBeLessThan(plain.body.length / 2);
    const gz = await t.request({ method: 'GET', url, key: team.ownerKey, headers: { 'accept-encoding': 'gzip' } });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(JSON.parse(gunzipSync(gz.rawPayload).toString())).toEqual(plain.json());

    const small = await t.request({ method: 'GET', url: '/api/v1/me', key: team.ownerKey, headers: { 'accept-encoding': 'br, gzip' } });
    expect(small.statusCode).toBe(200);
    expect(small.headers['content-encoding']).toBeUndefined();

    const streamed = await t.request({
      method: 'POST',
      url: `/api/v1/chat/${ws.id}/completions/stream`,
      key: team.ownerKey,
      payload: { prompt: 'and again' },
      headers: { 'accept-encoding': 'br, gzip' },
    });
    expect(streamed.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(streamed.headers['content-encoding']).toBeUndefined();
    expect(streamed.body).toContain('event: done');

    const v1 = await t.request({
      method: 'POST',
      url: '/v1/chat/completions',
      key: team.ownerKey,
      payload: { model: `workspace/${ws.id}`, messages: [{ role: 'user', content: 'once more' }] },
      headers: { 'accept-encoding': 'br, gzip' },
    });
    expect(v1.statusCode).toBe(200);
    expect(v1.headers['content-encoding']).toBeUndefined();
  });
});
