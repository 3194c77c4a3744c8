/**
 * The typed test client (test/helpers/api.ts) carries what tests need through app.inject: a live
 * event stream read chunk by chunk, every Set-Cookie, an empty 204, a multipart upload, and a
 * problem as `error` with its status.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { multipartBody } from '../helpers/api.js';
import { expectProblem, newTeam, startTestApp, type TestApp } from '../helpers/app.js';
import { createModel, createWorkspace } from '../helpers/factories.js';
import { signedInUser, SAME_ORIGIN, cookie } from '../helpers/session.js';
import { parseSse } from '../helpers/sse.js';
import { useStandIn } from '../support/use-standin.js';

const s = useStandIn();
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

describe('the typed client over app.inject', () => {
  it('reads an event stream as a stream when it asks for text/event-stream', async () => {
    const team = await newTeam(t);
    const model = await createModel(t, team.ownerKey, { url: s.standIn.openaiBaseUrl });
    const ws = await createWorkspace(t, team.ownerKey, { modelIds: [model.id] });
    const { data, response } = await t.api(team.ownerKey).POST('/api/v1/chat/{workspaceId}/completions/stream', {
      params: { path: { workspaceId: ws.id } },
      body: { prompt: 'one two three' },
      headers: { accept: 'text/event-stream' },
      parseAs: 'stream',
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(data).toBeInstanceOf(ReadableStream);
    let text = '';
    let chunks = 0;
    const decoder = new TextDecoder();
    for await (const chunk of data as unknown as AsyncIterable<Uint8Array>) {
      chunks++;
      text += decoder.decode(chunk, { stream: true });
    }
    expect(chunks).toBeGreaterThan(1);
    const events = parseSse(text).map((e) => e.event);
    expect(events.at(-1)).toBe('done');
  });

  it('keeps every Set-Cookie, answers a 204 with no data, and a problem as error', async () => {
    const team = await newTeam(t);
    const u = await signedInUser(t, team);
    const login = await t.api().POST('/api/v1/auth/login', { body: { email: u.email, password: u.password } });
    expect(login.response.headers.getSetCookie().some((c) => c.startsWith('atrium_session='))).toBe(true);
    const out = await t.api(null, { headers: { ...SAME_ORIGIN, ...cookie(u.session) } }).POST('/api/v1/auth/logout');
    expect(out.response.status).toBe(204);
    expect(out.data).toBeUndefined();
    const problem = expectProblem(await t.api('atr_not_a_key').GET('/api/v1/me'), 401);
    expect(problem.status).toBe(401);
  });

  it('sends a hand-built multipart body byte for byte', async () => {
    const team = await newTeam(t);
    const res = await t.api(team.ownerKey).POST(
      '/api/v1/plus',
      multipartBody([
        { name: 'title', value: 'Typed upload' },
        { name: 'files', filename: 'a.txt', contentType: 'text/plain', data: Buffer.from('alpha notes\n') },
      ]),
    );
    expect(res.response.status).toBe(200);
    expect(res.data).toMatchObject({ title: 'Typed upload', files: [{ filename: 'a.txt' }] });
  });
});
