import { readFileSync } from 'node:fs';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, newTeam, startTestApp, type TeamFixture, type TestApp } from '../helpers/app.js';
import { createModel, createWorkspace } from '../helpers/factories.js';
import { expectStatus, multipartBody } from '../helpers/api.js';
import type { Part } from '../helpers/multipart.js';
import { parseSse } from '../helpers/sse.js';
import { useStandIn } from '../support/use-standin.js';

const FIXTURES = path.join(import.meta.dirname, '..', 'fixtures');
const fixture = (name: string) => readFileSync(path.join(FIXTURES, name));
const file = (name: string, contentType?: string, filename = name): Part => ({
  name: 'files',
  filename,
  contentType: contentType ?? 'application/octet-stream',
  data: fixture(name),
});

let t: TestApp;
const stand = useStandIn();
beforeAll(async () => {
  t = await startTestApp({ upload: { maxFileBytes: 200_000, maxRequestBytes: 400_000, maxFiles: 5 } });
});
afterAll(async () => {
  await t.close();
});

async function savePlus(key: string, fields: Record<string, string>, files: Part[] = []) {
  return t.api(key).POST('/api/v1/plus', multipartBody([...Object.entries(fields).map(([name, value]) => ({ name, value })), ...files]));
}
async function createPlus(key: string, fields: Record<string, string>, files: Part[] = []) {
  return expectStatus(await savePlus(key, fields, files), 200);
}
const plusAt = (plusId: string) => ({ params: { path: { plusId } } });
const fileAt = (fileId: string) => ({ params: { path: { fileId } } });
const addFiles = (files: Part[]) => multipartBody(files);
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
    const named = new Map(plus.files.map((f) => [f.filename, f]));
    const byName = (name: string) => named.get(name) ?? expect.fail(`no file ${name}`);
    expect(byName('gpl-3.txt').mimeType).toBe('text/plain');
    expect(byName('mammoth-readme.md').mimeType).toBe('text/markdown');
    expect(byName('apache-license.docx').mimeType).toBe('application/vnd.openxmlformats-officedocument.wordprocessingml.document');
    expect(byName('shared-mime-info-spec.pdf').mimeType).toBe('application/pdf');
    for (const f of plus.files) {
      expect(f.fileChunks.length).toBeGreaterThan(0);
      expect(f.tokenSize).toBe(f.fileChunks.reduce((n, c) => n + c.tokenSize, 0));
      for (const c of f.fileChunks) expect(c.tokenSize).toBeGreaterThan(0);
    }
    expect(byName('gpl-3.txt').bytes).toBe(fixture('gpl-3.txt').length);
    expect(byName('gpl-3.txt').fileChunks.length).toBeGreaterThan(5);
    expect(
      byName('apache-license.docx')
        .fileChunks.map((c) => c.fileDataProcessed)
        .join(' '),
    ).toContain('Legal Entity');

    const pdf = await t
      .api(team.ownerKey)
      .GET('/api/v1/plus/file/{fileId}/content', { ...fileAt(byName('shared-mime-info-spec.pdf').id), parseAs: 'arrayBuffer' });
    expect(pdf.response.status).toBe(200);
    expect(pdf.response.headers.get('content-type')).toBe('application/pdf');
    expect(pdf.response.headers.get('content-disposition')).toContain('filename="shared-mime-info-spec.pdf"');
    expect(Buffer.compare(Buffer.from(pdf.data as ArrayBuffer), fixture('shared-mime-info-spec.pdf'))).toBe(0);
  });

  it('ingests HTML, CSV and JSON too, and sanitises file names', async () => {
    const team = await newTeam(t);
    const plus = await createPlus(team.ownerKey, { title: 'data' }, [
      file('users-and-groups.html', 'text/html', '..\\..\\windows\\users\tgroups.html'),
      file('debian-releases.csv', 'text/csv'),
      file('iso-4217-currencies.json', 'application/json'),
    ]);
    const names = plus.files.map((f) => f.filename);
    expect(names).toHaveLength(3);
    expect(names[0]).not.toMatch(/[/\\"]/);
    expect(names[0]).toMatch(/groups\.html$/);
    const html = plus.files[0]!;
    expect(html.mimeType).toBe('text/html');
    expect(html.fileChunks.map((c) => c.fileDataProcessed).join(' ')).not.toMatch(/<\/?(div|p|script)/i);
    const { response: res } = await t.api(team.ownerKey).GET('/api/v1/plus/file/{fileId}/content', { ...fileAt(html.id), parseAs: 'text' });
    expect(res.headers.get('content-disposition')).not.toContain('..');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('content-disposition')).toMatch(/^attachment;/);
    // an uploaded page opened in a tab loads and runs nothing
    expect(res.headers.get('content-security-policy')).toMatch(/default-src 'none'.*\bsandbox\b/);
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
    expect((await t.api(team.ownerKey).GET('/api/v1/plus')).data).toEqual([]);
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
    // raw: a JSON body, then broken multipart bodies, where the document takes multipart
    expectProblem(await t.request({ method: 'POST', url: '/api/v1/plus', key: team.ownerKey, payload: { title: 'json' } }), 415);
    expectProblem(
      // raw: see above
      await t.request({ method: 'POST', url: '/api/v1/plus', key: team.ownerKey, headers: { 'content-type': 'multipart/form-data' }, payload: 'abc' }),
      400,
    );
    const cut = '--XX\r\nContent-Disposition: form-data; name="files"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\nhello wor';
    expectProblem(
      await t.request({
        method: 'POST',
        url: '/api/v1/plus', // raw: a multipart body cut short
        key: team.ownerKey,
        headers: { 'content-type': 'multipart/form-data; boundary=XX' },
        payload: cut,
      }),
      400,
    );
    expectProblem(await savePlus(team.ownerKey, { title: 'nul\u0000' }), 400);
    expectProblem(await t.api(team.ownerKey).GET('/api/v1/plus/{plusId}', plusAt('not-a-uuid')), 400);
    expect((await t.api(team.ownerKey).GET('/api/v1/plus')).data).toEqual([]);
  });

  it('updates an entry by id and adds files; add-file and delete-file work', async () => {
    const team = await newTeam(t);
    const p = await createPlus(team.ownerKey, { title: 'v1' });
    const updated = await createPlus(team.ownerKey, { id: p.id, title: 'v2' }, [file('gpl-3.txt', 'text/plain')]);
    expect(updated).toMatchObject({ id: p.id, title: 'v2' });
    expect(updated.files).toHaveLength(1);
    const api = t.api(team.ownerKey);
    const added = await api.POST('/api/v1/plus/{plusId}/add-file', { ...plusAt(p.id), ...addFiles([file('mammoth-readme.md', 'text/markdown')]) });
    expect(added.data?.files).toHaveLength(2);
    const fileId = added.data!.files[0]!.id;
    expect((await api.DELETE('/api/v1/plus/file/{fileId}', fileAt(fileId))).data).toEqual({ deleted: true });
    expectProblem(await api.GET('/api/v1/plus/file/{fileId}/content', fileAt(fileId)), 404);
    expect((await api.GET('/api/v1/plus/{plusId}', plusAt(p.id))).data?.files).toHaveLength(1);
    expect((await api.DELETE('/api/v1/plus/{plusId}', plusAt(p.id))).data).toEqual({ deleted: true });
    expectProblem(await api.GET('/api/v1/plus/{plusId}', plusAt(p.id)), 404);
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
  const ids = async (key: string, showPublic?: boolean) =>
    (await t.api(key).GET('/api/v1/plus', { params: { query: showPublic === undefined ? {} : { showPublic } } })).data?.map((s) => s.id);

  it('public entries are read-only to the team; private ones are seen by the creator and admins only', async () => {
    expect(await ids(author.key)).toEqual([pub.id, priv.id]);
    expect(await ids(other.key)).toEqual([pub.id]);
    expect(await ids(other.key, false)).toEqual([]);
    expect(await ids(author.key, false)).toEqual([pub.id, priv.id]);
    expect(await ids(admin.key)).toEqual([pub.id, priv.id]);
    const api = t.api(other.key);
    expectProblem(await api.GET('/api/v1/plus/{plusId}', plusAt(priv.id)), 404);
    expectProblem(await api.GET('/api/v1/plus/file/{fileId}/content', fileAt(priv.files[0]!.id)), 404);
    expectProblem(await api.POST('/api/v1/plus/{plusId}/context-for-prompt', { ...plusAt(priv.id), body: { content: 'mammoth', explain: false } }), 404);
    expect((await api.GET('/api/v1/plus/{plusId}', plusAt(pub.id))).response.status).toBe(200);
    // read-only for a member who did not create it
    expectProblem(await api.DELETE('/api/v1/plus/{plusId}', plusAt(pub.id)), 403);
    expectProblem(await api.DELETE('/api/v1/plus/file/{fileId}', fileAt(pub.files[0]!.id)), 403);
    expectProblem(await savePlus(other.key, { id: pub.id, title: 'hijacked' }), 403);
    expectProblem(await api.POST('/api/v1/plus/{plusId}/add-file', { ...plusAt(pub.id), ...addFiles([file('gpl-3.txt', 'text/plain')]) }), 403);
    // an admin may change it
    expect((await savePlus(admin.key, { id: pub.id, description: 'checked by admin' })).data).toMatchObject({
      description: 'checked by admin',
      title: 'public',
    });
  });

  it('another team sees nothing', async () => {
    const b = await newTeam(t);
    expect(await ids(b.ownerKey)).toEqual([]);
    const api = t.api(b.ownerKey);
    expectProblem(await api.GET('/api/v1/plus/{plusId}', plusAt(pub.id)), 404);
    expectProblem(await api.DELETE('/api/v1/plus/{plusId}', plusAt(pub.id)), 404);
    expectProblem(await api.GET('/api/v1/plus/file/{fileId}/content', fileAt(pub.files[0]!.id)), 404);
    expectProblem(await api.DELETE('/api/v1/plus/file/{fileId}', fileAt(pub.files[0]!.id)), 404);
    expectProblem(await api.POST('/api/v1/plus/{plusId}/context-for-prompt', { ...plusAt(pub.id), body: { content: 'licence', explain: false } }), 404);
    expectProblem(await api.POST('/api/v1/plus/{plusId}/add-file', { ...plusAt(pub.id), ...addFiles([file('gpl-3.txt', 'text/plain')]) }), 404);
    expectProblem(await api.POST('/api/v1/chat/{plusId}/add-file', { ...plusAt(pub.id), ...addFiles([file('gpl-3.txt', 'text/plain')]) }), 404);
    // reusing another team's id makes an entry of the caller's team; it cannot overwrite theirs
    expect((await savePlus(b.ownerKey, { id: pub.id, title: 'mine' })).response.status).toBe(200);
    expect((await t.api(author.key).GET('/api/v1/plus/{plusId}', plusAt(pub.id))).data).toMatchObject({ title: 'public' });
  });
});

describe('context for a prompt', () => {
  it('finds the passage for a question phrased differently, marks it with the file name, within budget', async () => {
    const team = await newTeam(t);
    const p = await createPlus(team.ownerKey, { title: 'GPL', context: 'The team ships under the GPL.' }, [
      file('gpl-3.txt', 'text/plain'),
      file('mammoth-readme.md', 'text/markdown'),
    ]);
    const api = t.api(team.ownerKey);
    const res = await api.POST('/api/v1/plus/{plusId}/context-for-prompt', {
      ...plusAt(p.id),
      body: { content: 'Am I allowed to charge money when I hand copies to other people?', explain: false },
    });
    const { content } = expectStatus(res, 200);
    expect(content.startsWith('The team ships under the GPL.')).toBe(true);
    expect(content).toContain('### From gpl-3.txt');
    expect(content).toMatch(/charge any price or no price for each copy that you convey/i);
    const small = expectStatus(
      await api.POST('/api/v1/plus/{plusId}/context-for-prompt', {
        ...plusAt(p.id),
        body: { content: 'style map for headings', maxTokens: 300, explain: false },
      }),
      200,
    );
    const { countTokens } = await import('../../src/ingest/tokens.js');
    expect(countTokens(small.content)).toBeLessThanOrEqual(300);
    expect(small.content).toContain('### From mammoth-readme.md');
    // raw: a body without its content
    expectProblem(await t.request({ method: 'POST', url: `/api/v1/plus/${p.id}/context-for-prompt`, key: team.ownerKey, payload: {} }), 400);
    expectProblem(await api.POST('/api/v1/plus/{plusId}/context-for-prompt', { ...plusAt(p.id), body: { content: 'x', maxTokens: 0, explain: false } }), 400);
  });

  it('stops drawing on a deleted file; a question with no word in the entry gets its opening chunks', async () => {
    const team = await newTeam(t);
    const p = await createPlus(team.ownerKey, { title: 'two files' }, [file('gpl-3.txt', 'text/plain'), file('mammoth-readme.md', 'text/markdown')]);
    const api = t.api(team.ownerKey);
    const ask = async (content: string) =>
      expectStatus(await api.POST('/api/v1/plus/{plusId}/context-for-prompt', { ...plusAt(p.id), body: { content, maxTokens: 800, explain: false } }), 200)
        .content;
    expect(await ask('How does mammoth convert docx style maps?')).toContain('### From mammoth-readme.md');
    const mammoth = p.files.find((f) => f.filename === 'mammoth-readme.md')!;
    expect((await api.DELETE('/api/v1/plus/file/{fileId}', fileAt(mammoth.id))).response.status).toBe(200);
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
    const model = await createModel(t, team.ownerKey, { url: stand.standIn.openaiBaseUrl, contextWindow: 16000 });
    const w = await createWorkspace(t, team.ownerKey, { modelIds: [model.id], ...ws });
    return { team, model, ws: w };
  }

  it('answers with sources from plusIds, plain and streamed', async () => {
    const { team, ws } = await chatSetup();
    const p = await createPlus(team.ownerKey, { title: 'GPL' }, [file('gpl-3.txt', 'text/plain')]);
    const api = t.api(team.ownerKey);
    const wsAt = { params: { path: { workspaceId: ws.id } } };
    const res = await api.POST('/api/v1/chat/{workspaceId}/completions', {
      ...wsAt,
      body: { prompt: 'What must I do when I modify the program and distribute it?', plusIds: [p.id] },
    });
    const a = expectStatus(res, 200);
    expect(a.sources.length).toBeGreaterThan(0);
    expect(a.sources[0]).toMatchObject({ plusId: p.id, fileId: p.files[0]!.id, filename: 'gpl-3.txt' });
    expect(typeof a.sources[0]!.chunkId).toBe('number');
    const system = stand.standIn.requests[0]!.body.messages[0];
    expect(system.role).toBe('system');
    // The passages are numbered in the order of the sources, and the model is asked to cite them so.
    expect(system.content).toContain('cite it by its number in square brackets, like [1]');
    a.sources.forEach((src, i) => {
      expect(system.content).toContain(`### [${i + 1}] From ${src.filename}\n${src.excerpt.replace(/…$/, '')}`);
    });
    expect(system.content).not.toContain(`### [${a.sources.length + 1}]`);

    const s = await api.POST('/api/v1/chat/{workspaceId}/completions/stream', {
      ...wsAt,
      body: { prompt: 'Is there any warranty for the program?', plusIds: [p.id] },
      headers: { accept: 'text/event-stream' },
      parseAs: 'text',
    });
    const events = parseSse(s.data ?? '').map((e) => e.event);
    expect(events.slice(0, 3)).toEqual(['start', 'sources', 'delta']);
    const other = await newTeam(t);
    const foreign = await createPlus(other.ownerKey, { title: 'theirs' });
    expectProblem(await api.POST('/api/v1/chat/{workspaceId}/completions', { ...wsAt, body: { prompt: 'x', plusIds: [foreign.id] } }), 404);
  });

  it('files added to a thread from the chat feed its later turns; summarize stores a summary', async () => {
    const { team, model, ws } = await chatSetup();
    const api = t.api(team.ownerKey);
    const wsAt = { params: { path: { workspaceId: ws.id } } };
    const first = expectStatus(await api.POST('/api/v1/chat/{workspaceId}/completions', { ...wsAt, body: { prompt: 'hello' } }), 200);
    const p = await createPlus(team.ownerKey, { title: 'Chat uploads' });
    const res = await api.POST('/api/v1/chat/{plusId}/add-file', {
      params: { path: { plusId: p.id }, query: { threadId: first.threadId, summarize: true, models: [model.id], collection: 'chat' } },
      ...addFiles([file('mammoth-readme.md', 'text/markdown')]),
    });
    const f = expectStatus(res, 200).files[0]!;
    expect(f).toMatchObject({ filename: 'mammoth-readme.md', threadId: first.threadId });
    expect(f.summary).toMatch(/^Echo: Summarise the document "mammoth-readme.md"/);
    stand.standIn.reset();
    const next = expectStatus(
      await api.POST('/api/v1/chat/{workspaceId}/completions', {
        ...wsAt,
        body: { prompt: 'How do I convert a docx file with custom style maps?', threadId: first.threadId },
      }),
      200,
    );
    expect(next.sources.length).toBeGreaterThan(0);
    expect(next.sources[0]!.filename).toBe('mammoth-readme.md');
    expect(stand.standIn.requests[0]!.body.messages[0].content).toContain('### [1] From mammoth-readme.md');
    // a thread of another workspace the caller cannot see
    const ghost = '00000000-0000-4000-8000-000000000000';
    const gpl = () => addFiles([file('gpl-3.txt', 'text/plain')]);
    expectProblem(await api.POST('/api/v1/chat/{plusId}/add-file', { params: { path: { plusId: p.id }, query: { threadId: ghost } }, ...gpl() }), 404);
    expectProblem(await api.POST('/api/v1/chat/{plusId}/add-file', { params: { path: { plusId: p.id }, query: { summarize: true } }, ...gpl() }), 400);
    expectProblem(await api.POST('/api/v1/chat/{plusId}/add-file', { params: { path: { plusId: p.id } }, ...addFiles([]) }), 400);
  });

  it.each(['SHARED', 'PRIVATE'] as const)(
    'in a %s-context workspace, files one user adds to a thread feed other users’ turns only if SHARED',
    async (contextType) => {
      const { team, ws } = await chatSetup({ contextType, chatHistoryType: 'TEAM' });
      const m1 = await team.addUser('member');
      const m2 = await team.addUser('member');
      const wsAt = { params: { path: { workspaceId: ws.id } } };
      const ask = async (key: string, body: { prompt: string; threadId?: string }) =>
        expectStatus(await t.api(key).POST('/api/v1/chat/{workspaceId}/completions', { ...wsAt, body }), 200);
      const thread = (await ask(m1.key, { prompt: 'start' })).threadId;
      const p = await createPlus(m1.key, { title: 'm1 files', isPublic: 'true' });
      const up = await t.api(m1.key).POST('/api/v1/chat/{plusId}/add-file', {
        params: { path: { plusId: p.id }, query: { threadId: thread } },
        ...addFiles([file('mammoth-readme.md', 'text/markdown')]),
      });
      expect(up.response.status).toBe(200);
      const q = { prompt: 'How do style maps work for headings?', threadId: thread };
      const mine = await ask(m1.key, q);
      expect(mine.sources.length).toBeGreaterThan(0);
      const theirs = await ask(m2.key, q);
      if (contextType === 'PRIVATE') expect(theirs.sources).toEqual([]);
      else expect(theirs.sources.map((x) => x.fileId)).toEqual(mine.sources.map((x) => x.fileId));
    },
  );
});
