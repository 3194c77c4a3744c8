/**
 * DOCX archives laid out so that a lenient ZIP reader finds a deflate bomb the size check never
 * saw (bytes before or after the archive, ZIP64 records, several disks, data descriptors, two
 * members of one name, local headers that disagree with the directory). Each is uploaded over
 * HTTP and must be refused with a 4xx naming the file, storing nothing, while the process's
 * peak resident memory (this test file runs in a process of its own) rises by less than 300 MB:
 * every bomb here inflates to 512 MiB.
 */
import { resourceUsage } from 'node:process';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { expectProblem, newTeam, startTestApp, type TeamFixture, type TestApp } from '../helpers/app.js';
import { expectStatus, multipartBody } from '../helpers/api.js';
import { DOCX_MIME, MiB, SMALL_CAPS } from './hostile-files.js';
import { bombMember, documentXml, docxFrame, rawZip, type RawMember } from './hostile-zips.js';

vi.setConfig({ testTimeout: 120_000 });

const MAX_RSS_RISE_MB = 300;

let made: RawMember | undefined;
const bomb = (): RawMember => (made ??= bombMember('word/document.xml', 512 * MiB, '<w:p><w:r><w:t>bomb</w:t></w:r></w:p>'));
/** The same bomb whose directory (and descriptor) declare 1,000 bytes: only inflating tells. */
const lyingBomb = (): RawMember => ({ ...bomb(), size: 1000 });
const damaged = (file: string, problem: string): string => `"${file}" could not be read as a Word document: ${problem}.`;
const memberOver = (file: string): string =>
  `"${file}" has a member (word/document.xml) that inflates to more than 4 MiB; the limit is 4 MiB per member (INGEST_MAX_INFLATED_MEMBER_BYTES).`;

/** Peak resident set size of this process so far, in MB (worker threads included). */
const peakRssMb = (): number => resourceUsage().maxRSS / 1024;

describe('DOCX archives are read only in the layout that was checked', () => {
  let t: TestApp;
  let team: TeamFixture;
  let baselineMb = 0;

  const upload = async (filename: string, data: Buffer) => {
    const body = multipartBody([
      { name: 'title', value: 'archive' },
      { name: 'files', filename, contentType: DOCX_MIME, data },
    ]);
    return t.api(team.ownerKey).POST('/api/v1/plus', body);
  };
  const refused = async (filename: string, data: Buffer, status: number, detail: string): Promise<void> => {
    const p = expectProblem(await upload(filename, data), status);
    expect(peakRssMb() - baselineMb).toBeLessThan(MAX_RSS_RISE_MB);
    expect(p.detail).toBe(detail);
  };

  beforeAll(async () => {
    t = await startTestApp({ ingest: SMALL_CAPS });
    team = await newTeam(t);
    // Warm up: a worker has loaded mammoth and read a document before the baseline is taken.
    expectStatus(await upload('warm.docx', rawZip([...docxFrame(), documentXml('Warm-up paragraph.')])), 200);
    baselineMb = peakRssMb();
  });
  afterAll(() => t.close());

  it('30 bytes before the archive (a lenient reader shifts every offset by them) → 400', async () => {
    const archive = rawZip([...docxFrame(), bomb()]);
    const prefix = Buffer.alloc(30);
    prefix.writeUInt32LE(0x04034b50, 0);
    await refused(
      'prepended.docx',
      Buffer.concat([prefix, archive]),
      400,
      damaged('prepended.docx', 'its directory is not where its end record says (bytes were added before it?)'),
    );
  });

  it('bytes after the end record → 400', async () => {
    const archive = rawZip([...docxFrame(), lyingBomb()]);
    await refused('appended.docx', Buffer.concat([archive, Buffer.alloc(1000, 0x20)]), 400, damaged('appended.docx', 'bytes follow the end of the archive'));
  });

  it('ZIP64 records → 400', async () => {
    await refused('zip64.docx', rawZip([...docxFrame(), bomb()], { zip64: true }), 400, damaged('zip64.docx', 'it is a ZIP64 archive'));
  });

  it('an archive that says it spans several disks → 400', async () => {
    await refused('disks.docx', rawZip([...docxFrame(), bomb()], { disk: 1 }), 400, damaged('disks.docx', 'it spans several disks'));
  });

  it('two members of one name (a small one first, the bomb second) → 400', async () => {
    await refused(
      'twice.docx',
      rawZip([...docxFrame(), documentXml('Innocent.'), bomb()]),
      400,
      damaged('twice.docx', 'two of its members are named word/document.xml'),
    );
  });

  it('a local header whose name disagrees with the directory → 400', async () => {
    const archive = rawZip([...docxFrame(), { ...bomb(), localName: 'word/other.xml' }]);
    await refused('disagree.docx', archive, 400, damaged('disagree.docx', 'the local header of its member word/document.xml disagrees with the directory'));
  });

  it('sizes in data descriptors: a declared 512 MiB is refused before inflating, a declared 1,000 bytes while inflating → 413', async () => {
    await refused('descriptor.docx', rawZip([...docxFrame(), { ...bomb(), descriptor: true }]), 413, memberOver('descriptor.docx'));
    await refused('descriptor-lie.docx', rawZip([...docxFrame(), { ...lyingBomb(), descriptor: true }]), 413, memberOver('descriptor-lie.docx'));
  });

  it('a truncated deflate stream that declares 1,000 bytes → 413 on what it really inflates to', async () => {
    const cut = lyingBomb();
    await refused(
      'cut.docx',
      rawZip([...docxFrame(), { ...cut, compressed: cut.compressed.subarray(0, cut.compressed.length - 2) }]),
      413,
      memberOver('cut.docx'),
    );
  });

  it('nothing was stored, and a DOCX written with data descriptors is read', async () => {
    const list = expectStatus(await t.api(team.ownerKey).GET('/api/v1/plus'), 200);
    expect(list.map((e) => e.title)).toEqual(['archive']); // the warm-up's only
    const ok = await upload('streamed.docx', rawZip([...docxFrame(), { ...documentXml('Written by a streaming writer.'), descriptor: true }]));
    expect(expectStatus(ok, 200).files[0]!.fileChunks[0]!.fileDataProcessed).toContain('Written by a streaming writer.');
    expect(peakRssMb() - baselineMb).toBeLessThan(MAX_RSS_RISE_MB);
  });
});
