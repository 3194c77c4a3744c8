import { readFileSync } from 'node:fs';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { expectProblem, newTeam, startTestApp, type TeamFixture, type TestApp } from '../helpers/app.js';
import { createModel, createWorkspace } from '../helpers/factories.js';
import { multipart, type Part } from '../helpers/multipart.js';
import { parseSse } from '../helpers/sse.js';
import { startStandInProvider, type StandInProvider } from '../support/standin-provider.js';

const FIXTURES = path.join(import.meta.dirname, '..', 'fixtures');
const fixture = (name: string) => readFileSync(path.join(FIXTURES, name));
const file = (name: string, contentType?: string, filename = name): Part => ({
  name: 'files',
  filename,
  contentType: contentType ?? 'application/octet-stream',
  data: fixture(name),
});

let t: TestApp;
let standIn: StandInProvider;
let baseUrl: string;
beforeAll(async () => {
  standIn = await startStandInProvider();
  t = await startTestApp({ upload: { maxFileBytes: 200_000, maxRequestBytes: 400_000, maxFiles: 5 } });
  baseUrl = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await t.close();
  await standIn.close();
});
beforeEach(() => standIn.reset());

async function savePlus(key: string, fields: Record<string, string>, files: Part[] = []) {
  const body = multipart([...Object.entries(fields).map(([name, value]) => ({ name, value })), ...files]);
  return t.request({ method: 'POST', url: '/api/v1/plus', key, ...body });
}
async function createPlus(key: string, fields: Record<string, string>, files: Part[] = []) {
  const res = await savePlus(key, fields, files);
  if (res.statusCode !== 200) throw new Error(`createPlus: ${res.statusCode} ${res.body}`);
  return res.json();
}
async function countRows(table: 'plus_entries' | 'plus_files' | 'plus_chunks'): Promise<number> {
  const r = (await t.database.db.execute(sql.raw(`select count(*)::int as n from ${table}`))) as unknown as { rows: Array<{ n: number }> };
  return r.rows[0]!.n;
}

describe('Plus entries: ingestion', () => {
  it('stores real documents of every format with chunks and token sizes, and serves the bytes back', async () => {
    const team = await newTeam(t);
    const plus = await createPlus(
      team.ownerKey,
      { title: 'Licences and docs', description: 'real files', context: 'Background: open-source licences.', isPublic: 'true' },
      [
        file('gpl-3.txt', 'text/plain'),
        file('mammoth-readme.md', 'text/markdown'),
        file('apache-license.docx'),
        file('shared-mime-info-spec.pdf', 'application/pdf'),
      ],
    );
    expect(plus).toMatchObject({ title: 'Licences and docs', isPublic: true, context: 'Background: open-source licences.' });
    const byName = Object.fromEntries(plus.files.map((f: { filename: string }) => [f.filename, f]));
    expect(byName['gpl-3.txt'].mimeType).toBe('text/plain');
    expect(byName['mammoth-readme.md'].mimeType).toBe('text/markdown');
    expect(byName['apache-license.docx'].mimeType).toBe('application/vnd.openxmlformats-officedocument.wordprocessingml.document');
    expect(byName['shared-mime-info-spec.pdf'].mimeType).toBe('application/pdf');
    for (const f of plus.files) {
      expect(f.fileChunks.length).toBeGreaterThan(0);
      expect(f.tokenSize).toBe(f.fileChunks.reduce((n: number, c: { tokenSize: number }) => n + c.tokenSize, 0));
      for (const c of f.fileChunks) expect(c.tokenSize).toBeGreaterThan(0);
    }
    expect(byName['gpl-3.txt'].bytes).toBe(fixture('gpl-3.txt').length);
    expect(byName['gpl-3.txt'].fileChunks.length).toBeGreaterThan(5);
    expect(byName['apache-license.docx'].fileChunks.map((c: { fileDataProcessed: string }) => c.fileDataProcessed).join(' ')).toContain('Legal Entity');

    const pdf = await t.request({ method: 'GET', url: `/api/v1/plus/file/${byName['shared-mime-info-spec.pdf'].id}/content`, key: team.ownerKey });
    expect(pdf.statusCode).toBe(200);
    expect(pdf.headers['content-type']).toBe('application/pdf');
    expect(pdf.headers['content-disposition']).toContain('filename="shared-mime-info-spec.pdf"');
    expect(Buffer.compare(pdf.rawPayload, fixture('shared-mime-info-spec.pdf'))).toBe(0);
  });

  it('ingests HTML, CSV and JSON too, and sanitises file names', async () => {
    const team = await newTeam(t);
    const plus = await createPlus(team.ownerKey, { title: 'data' }, [
      file('users-and-groups.html', 'text/html', '..\\..\\windows\\users\tgroups.html'),
      file('debian-releases.csv', 'text/csv'),
      file('iso-4217-currencies.json', 'application/json'),
    ]);
    const names = plus.files.map((f: { filename: string }) => f.filename);
    expect(names).toHaveLength(3);
    expect(names[0]).not.toMatch(/[/\\"]/);
    expect(names[0]).toMatch(/groups\.html$/);
    const html = plus.files[0];
    expect(html.mimeType).toBe('text/html');
    expect(html.fileChunks.map((c: { fileDataProcessed: string }) => c.fileDataProcessed).join(' ')).not.toMatch(/<\/?(div|p|script)/i);
    const res = await t.request({ method: 'GET', url: `/api/v1/plus/file/${html.id}/content`, key: team.ownerKey });
    expect(res.headers['content-disposition']).not.toContain('..');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['content-disposition']).toMatch(/^attachment;/);
    // an uploaded page opened in a tab loads and runs nothing
    expect(res.headers['content-security-policy']).toMatch(/default-src 'none'.*\bsandbox\b/);
  });

  it('refuses unreadable files with 415 or 400 naming the file, storing nothing', async () => {
    const team = await newTeam(t);
    const before = await Promise.all([countRows('plus_entries'), countRows('plus_files'), countRows('plus_chunks')]);
    const disguised = expectProblem(
      await savePlus(team.ownerKey, { title: 'x' }, [file('gpl-3.txt', 'text/plain'), file('png-disguised.txt', 'text/plain')]),
      415,
    );
    expect(disguised.detail).toContain('png-disguised.txt');
    const corrupt = expectProblem(await savePlus(team.ownerKey, { title: 'x' }, [file('truncated.pdf', 'application/pdf')]), 400);
    expect(corrupt.detail).toContain('truncated.pdf');
    expectProblem(await savePlus(team.ownerKey, { title: 'x' }, [file('not-a-docx.zip', 'application/zip')]), 415);
    expectProblem(await savePlus(team.ownerKey, { title: 'x' }, [file('truncated.docx')]), 400);
    expectProblem(await savePlus(team.ownerKey, { title: 'x' }, [file('truncated.json', 'application/json')]), 400);
    expect(await Promise.all([countRows('plus_entries'), countRows('plus_files'), countRows('plus_chunks')])).toEqual(before);
    expect((await t.request({ method: 'GET', url: '/api/v1/plus', key: team.ownerKey })).json()).toEqual([]);
  });

  it('enforces size and count limits with 413, and other bad input with 4xx', async () => {
    const team = await newTeam(t);
    const big: Part = { name: 'files', filename: 'big.txt', contentType: 'text/plain', data: Buffer.alloc(250_000, 'a') };
    expectProblem(await savePlus(team.ownerKey, { title: 'x' }, [big]), 413);
    const many = Array.from({ length: 6 }, (_, i) => ({
      name: 'files',
      filename: `f${i}.txt`,
      contentType: 'text/plain',
      data: Buffer.from(`file number ${i} has some words`),
    }));
    expectProblem(await savePlus(team.ownerKey, { title: 'x' }, many), 413);
    const total = Array.from({ length: 3 }, (_, i) => ({
      name: 'files',
      filename: `m${i}.txt`,
      contentType: 'text/plain',
      data: Buffer.alloc(150_000, 'word '),
    }));
    expectProblem(await savePlus(team.ownerKey, { title: 'x' }, total), 413);
    expectProblem(await savePlus(team.ownerKey, { title: 'x', isPublic: 'maybe' }), 400);
    expectProblem(await savePlus(team.ownerKey, { id: 'nope' }), 400);
    expectProblem(await t.request({ method: 'POST', url: '/api/v1/plus', key: team.ownerKey, payload: { title: 'json' } }), 415);
    expectProblem(
      await t.request({ method: 'POST', url: '/api/v1/plus', key: team.ownerKey, headers: { 'content-type': 'multipart/form-data' }, payload: 'abc' }),
      400,
    );
    const cut = '--XX\r\nContent-Disposition: form-data; name="files"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\nhello wor';
    expectProblem(
      await t.request({
        method: 'POST',
        url: '/api/v1/plus',
        key: team.ownerKey,
        headers: { 'content-type': 'multipart/form-data; boundary=XX' },
        payload: cut,
      }),
      400,
    );
    expectProblem(await savePlus(team.ownerKey, { title: 'nul\u0000' }), 400);
    expectProblem(await t.request({ method: 'GET', url: '/api/v1/plus/not-a-uuid', key: team.ownerKey }), 400);
    expect((await t.request({ method: 'GET', url: '/api/v1/plus', key: team.ownerKey })).json()).toEqual([]);
  });

  it('updates an entry by id and adds files; add-file and delete-file work', async () => {
    const team = await newTeam(t);
    const p = await createPlus(team.ownerKey, { title: 'v1' });
    const updated = await createPlus(team.ownerKey, { id: p.id, title: 'v2' }, [file('gpl-3.txt', 'text/plain')]);
    expect(updated).toMatchObject({ id: p.id, title: 'v2' });
    expect(updated.files).toHaveLength(1);
    const body = multipart([file('mammoth-readme.md', 'text/markdown')]);
    const added = await t.request({ method: 'POST', url: `/api/v1/plus/${p.id}/add-file`, key: team.ownerKey, ...body });
    expect(added.json().files).toHaveLength(2);
    const fileId = added.json().files[0].id;
    expect((await t.request({ method: 'DELETE', url: `/api/v1/plus/file/${fileId}`, key: team.ownerKey })).json()).toEqual({ deleted: true });
    expectProblem(await t.request({ method: 'GET', url: `/api/v1/plus/file/${fileId}/content`, key: team.ownerKey }), 404);
    expect((await t.request({ method: 'GET', url: `/api/v1/plus/${p.id}`, key: team.ownerKey })).json().files).toHaveLength(1);
    expect((await t.request({ method: 'DELETE', url: `/api/v1/plus/${p.id}`, key: team.ownerKey })).json()).toEqual({ deleted: true });
    expectProblem(await t.request({ method: 'GET', url: `/api/v1/plus/${p.id}`, key: team.ownerKey }), 404);
  });
});

describe('Plus entries: visibility', () => {
  let team: TeamFixture;
  let author: { id: number; key: string };
  let other: { id: number; key: string };
  let admin: { id: number; key: string };
  let pub: { id: string; files: Array<{ id: string }> };
  let priv: { id: string; files: Array<{ id: string }> };
  beforeAll(async () => {
    team = await newTeam(t);
    author = await team.addUser('member');
    other = await team.addUser('member');
    admin = await team.addUser('admin');
    pub = await createPlus(author.key, { title: 'public', isPublic: 'true' }, [file('gpl-3.txt', 'text/plain')]);
    priv = await createPlus(author.key, { title: 'private', isPublic: 'false' }, [file('mammoth-readme.md', 'text/markdown')]);
  });
  const ids = async (key: string, q = '') => (await t.request({ method: 'GET', url: `/api/v1/plus${q}`, key })).json().map((s: { id: string }) => s.id);

  it('public entries are read-only to the team; private ones are seen by the creator and admins only', async () => {
    expect(await ids(author.key)).toEqual([pub.id, priv.id]);
    expect(await ids(other.key)).toEqual([pub.id]);
    expect(await ids(other.key, '?showPublic=false')).toEqual([]);
    expect(await ids(author.key, '?showPublic=false')).toEqual([pub.id, priv.id]);
    expect(await ids(admin.key)).toEqual([pub.id, priv.id]);
    expectProblem(await t.request({ method: 'GET', url: `/api/v1/plus/${priv.id}`, key: other.key }), 404);
    expectProblem(await t.request({ method: 'GET', url: `/api/v1/plus/file/${priv.files[0]!.id}/content`, key: other.key }), 404);
    expectProblem(await t.request({ method: 'POST', url: `/api/v1/plus/${priv.id}/context-for-prompt`, key: other.key, payload: { content: 'mammoth' } }), 404);
    expect((await t.request({ method: 'GET', url: `/api/v1/plus/${pub.id}`, key: other.key })).statusCode).toBe(200);
    // read-only for a member who did not create it
    expectProblem(await t.request({ method: 'DELETE', url: `/api/v1/plus/${pub.id}`, key: other.key }), 403);
    expectProblem(await t.request({ method: 'DELETE', url: `/api/v1/plus/file/${pub.files[0]!.id}`, key: other.key }), 403);
    expectProblem(await savePlus(other.key, { id: pub.id, title: 'hijacked' }), 403);
    const addBody = multipart([file('gpl-3.txt', 'text/plain')]);
    expectProblem(await t.request({ method: 'POST', url: `/api/v1/plus/${pub.id}/add-file`, key: other.key, ...addBody }), 403);
    // an admin may change it
    expect((await savePlus(admin.key, { id: pub.id, description: 'checked by admin' })).json()).toMatchObject({
      description: 'checked by admin',
      title: 'public',
    });
  });

  it('another team sees nothing', async () => {
    const b = await newTeam(t);
    expect(await ids(b.ownerKey)).toEqual([]);
    for (const [method, url] of [
      ['GET', `/api/v1/plus/${pub.id}`],
      ['DELETE', `/api/v1/plus/${pub.id}`],
      ['GET', `/api/v1/plus/file/${pub.files[0]!.id}/content`],
      ['DELETE', `/api/v1/plus/file/${pub.files[0]!.id}`],
    ] as const) {
      expectProblem(await t.request({ method, url, key: b.ownerKey }), 404);
    }
    expectProblem(await t.request({ method: 'POST', url: `/api/v1/plus/${pub.id}/context-for-prompt`, key: b.ownerKey, payload: { content: 'licence' } }), 404);
    const addBody = multipart([file('gpl-3.txt', 'text/plain')]);
    expectProblem(await t.request({ method: 'POST', url: `/api/v1/plus/${pub.id}/add-file`, key: b.ownerKey, ...addBody }), 404);
    const chatBody = multipart([file('gpl-3.txt', 'text/plain')]);
    expectProblem(await t.request({ method: 'POST', url: `/api/v1/chat/${pub.id}/add-file`, key: b.ownerKey, ...chatBody }), 404);
    // reusing another team's id makes an entry of the caller's team; it cannot overwrite theirs
    expect((await savePlus(b.ownerKey, { id: pub.id, title: 'mine' })).statusCode).toBe(200);
    expect((await t.request({ method: 'GET', url: `/api/v1/plus/${pub.id}`, key: author.key })).json()).toMatchObject({ title: 'public' });
  });
});

describe('context for a prompt', () => {
  it('finds the passage for a question phrased differently, marks it with the file name, within budget', async () => {
    const team = await newTeam(t);
    const p = await createPlus(team.ownerKey, { title: 'GPL', context: 'The team ships under the GPL.' }, [
      file('gpl-3.txt', 'text/plain'),
      file('mammoth-readme.md', 'text/markdown'),
    ]);
    const res = await t.request({
      method: 'POST',
      url: `/api/v1/plus/${p.id}/context-for-prompt`,
      key: team.ownerKey,
      payload: { content: 'Am I allowed to charge money when I hand copies to other people?' },
    });
    expect(res.statusCode).toBe(200);
    const { content } = res.json();
    expect(content.startsWith('The team ships under the GPL.')).toBe(true);
    expect(content).toContain('### From gpl-3.txt');
    expect(content).toMatch(/charge any price or no price for each copy that you convey/i);
    const small = (
      await t.request({
        method: 'POST',
        url: `/api/v1/plus/${p.id}/context-for-prompt`,
        key: team.ownerKey,
        payload: { content: 'style map for headings', maxTokens: 300 },
      })
    ).json();
    const { countTokens } = await import('../../src/ingest/tokens.js');
    expect(countTokens(small.content)).toBeLessThanOrEqual(300);
    expect(small.content).toContain('### From mammoth-readme.md');
    expectProblem(await t.request({ method: 'POST', url: `/api/v1/plus/${p.id}/context-for-prompt`, key: team.ownerKey, payload: {} }), 400);
    expectProblem(
      await t.request({ method: 'POST', url: `/api/v1/plus/${p.id}/context-for-prompt`, key: team.ownerKey, payload: { content: 'x', maxTokens: 0 } }),
      400,
    );
  });

  it('stops drawing on a deleted file; a question with no word in the entry gets its opening chunks', async () => {
    const team = await newTeam(t);
    const p = await createPlus(team.ownerKey, { title: 'two files' }, [file('gpl-3.txt', 'text/plain'), file('mammoth-readme.md', 'text/markdown')]);
    const ask = async (content: string) =>
      (await t.request({ method: 'POST', url: `/api/v1/plus/${p.id}/context-for-prompt`, key: team.ownerKey, payload: { content, maxTokens: 800 } })).json()
        .content as string;
    expect(await ask('How does mammoth convert docx style maps?')).toContain('### From mammoth-readme.md');
    const mammoth = p.files.find((f: { filename: string }) => f.filename === 'mammoth-readme.md');
    expect((await t.request({ method: 'DELETE', url: `/api/v1/plus/file/${mammoth.id}`, key: team.ownerKey })).statusCode).toBe(200);
    const after = await ask('How does mammoth convert docx style maps?');
    expect(after).not.toContain('mammoth-readme.md');
    expect(after).toContain('### From gpl-3.txt');
    // only stop words and words absent from the entry: the opening chunks
    const opening = await ask('What about the xylophones?');
    expect(opening).toContain('GNU GENERAL PUBLIC LICENSE');
  });
});

describe('Plus context in chat', () => {
  async function chatSetup(ws: Record<string, unknown> = {}) {
    const team = await newTeam(t);
    const model = await createModel(t, team.ownerKey, { url: standIn.openaiBaseUrl, contextWindow: 16000 });
    const w = await createWorkspace(t, team.ownerKey, { modelIds: [model.id], ...ws });
    return { team, model, ws: w };
  }

  it('answers with sources from plusIds, plain and streamed', async () => {
    const { team, ws } = await chatSetup();
    const p = await createPlus(team.ownerKey, { title: 'GPL' }, [file('gpl-3.txt', 'text/plain')]);
    const res = await t.request({
      method: 'POST',
      url: `/api/v1/chat/${ws.id}/completions`,
      key: team.ownerKey,
      payload: { prompt: 'What must I do when I modify the program and distribute it?', plusIds: [p.id] },
    });
    expect(res.statusCode).toBe(200);
    const a = res.json();
    expect(a.sources.length).toBeGreaterThan(0);
    expect(a.sources[0]).toMatchObject({ plusId: p.id, fileId: p.files[0].id, filename: 'gpl-3.txt' });
    expect(typeof a.sources[0].chunkId).toBe('number');
    const system = standIn.requests[0]!.body.messages[0];
    expect(system.role).toBe('system');
    // The passages are numbered in the order of the sources, and the model is asked to cite them so.
    expect(system.content).toContain('cite it by its number in square brackets, like [1]');
    a.sources.forEach((src: { filename: string; excerpt: string }, i: number) => {
      expect(system.content).toContain(`### [${i + 1}] From ${src.filename}\n${src.excerpt.replace(/…$/, '')}`);
    });
    expect(system.content).not.toContain(`### [${a.sources.length + 1}]`);

    const s = await fetch(`${baseUrl}/api/v1/chat/${ws.id}/completions/stream`, {
      method: 'POST',
      headers: { authorization: `Bearer ${team.ownerKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: 'Is there any warranty for the program?', plusIds: [p.id] }),
    });
    const events = parseSse(await s.text()).map((e) => e.event);
    expect(events.slice(0, 3)).toEqual(['start', 'sources', 'delta']);
    const other = await newTeam(t);
    const foreign = await createPlus(other.ownerKey, { title: 'theirs' });
    expectProblem(
      await t.request({ method: 'POST', url: `/api/v1/chat/${ws.id}/completions`, key: team.ownerKey, payload: { prompt: 'x', plusIds: [foreign.id] } }),
      404,
    );
  });

  it('files added to a thread from the chat feed its later turns; summarize stores a summary', async () => {
    const { team, model, ws } = await chatSetup();
    const first = (await t.request({ method: 'POST', url: `/api/v1/chat/${ws.id}/completions`, key: team.ownerKey, payload: { prompt: 'hello' } })).json();
    const p = await createPlus(team.ownerKey, { title: 'Chat uploads' });
    const body = multipart([file('mammoth-readme.md', 'text/markdown')]);
    const res = await t.request({
      method: 'POST',
      url: `/api/v1/chat/${p.id}/add-file?threadId=${first.threadId}&summarize=true&models=${model.id}&collection=chat`,
      key: team.ownerKey,
      ...body,
    });
    expect(res.statusCode).toBe(200);
    const f = res.json().files[0];
    expect(f).toMatchObject({ filename: 'mammoth-readme.md', threadId: first.threadId });
    expect(f.summary).toMatch(/^Echo: Summarise the document "mammoth-readme.md"/);
    standIn.reset();
    const next = (
      await t.request({
        method: 'POST',
        url: `/api/v1/chat/${ws.id}/completions`,
        key: team.ownerKey,
        payload: { prompt: 'How do I convert a docx file with custom style maps?', threadId: first.threadId },
      })
    ).json();
    expect(next.sources.length).toBeGreaterThan(0);
    expect(next.sources[0].filename).toBe('mammoth-readme.md');
    expect(standIn.requests[0]!.body.messages[0].content).toContain('### [1] From mammoth-readme.md');
    // a thread of another workspace the caller cannot see
    const ghost = '00000000-0000-4000-8000-000000000000';
    expectProblem(
      await t.request({
        method: 'POST',
        url: `/api/v1/chat/${p.id}/add-file?threadId=${ghost}`,
        key: team.ownerKey,
        ...multipart([file('gpl-3.txt', 'text/plain')]),
      }),
      404,
    );
    expectProblem(
      await t.request({
        method: 'POST',
        url: `/api/v1/chat/${p.id}/add-file?summarize=true`,
        key: team.ownerKey,
        ...multipart([file('gpl-3.txt', 'text/plain')]),
      }),
      400,
    );
    expectProblem(await t.request({ method: 'POST', url: `/api/v1/chat/${p.id}/add-file`, key: team.ownerKey, ...multipart([]) }), 400);
  });

  it.each(['SHARED', 'PRIVATE'] as const)(
    'in a %s-context workspace, files one user adds to a thread feed other users’ turns only if SHARED',
    async (contextType) => {
      const { team, ws } = await chatSetup({ contextType, chatHistoryType: 'TEAM' });
      const m1 = await team.addUser('member');
      const m2 = await team.addUser('member');
      const thread = (await t.request({ method: 'POST', url: `/api/v1/chat/${ws.id}/completions`, key: m1.key, payload: { prompt: 'start' } })).json().threadId;
      const p = await createPlus(m1.key, { title: 'm1 files', isPublic: 'true' });
      const up = await t.request({
        method: 'POST',
        url: `/api/v1/chat/${p.id}/add-file?threadId=${thread}`,
        key: m1.key,
        ...multipart([file('mammoth-readme.md', 'text/markdown')]),
      });
      expect(up.statusCode).toBe(200);
      const q = { prompt: 'How do style maps work for headings?', threadId: thread };
      const mine = (await t.request({ method: 'POST', url: `/api/v1/chat/${ws.id}/completions`, key: m1.key, payload: q })).json();
      expect(mine.sources.length).toBeGreaterThan(0);
      const theirs = (await t.request({ method: 'POST', url: `/api/v1/chat/${ws.id}/completions`, key: m2.key, payload: q })).json();
      if (contextType === 'PRIVATE') expect(theirs.sources).toEqual([]);
      else expect(theirs.sources.map((x: { fileId: string }) => x.fileId)).toEqual(mine.sources.map((x: { fileId: string }) => x.fileId));
    },
  );
});
