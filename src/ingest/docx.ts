/**
 * DOCX → text: the archive is read strictly and every member inflated under the caps first
 * (zip.ts: a small file can inflate to gigabytes), then mammoth reads an archive rebuilt from
 * those checked members, never the upload itself → HTML (headings h1–h6, Title/Subtitle mapped too, images
 * dropped, external file access off) → the HTML-to-text path, so headings survive.
 */
import mammoth from 'mammoth';
import { IngestError } from './errors.js';
import { htmlToPlainText } from './html.js';
import type { IngestLimits } from './limits.js';
import { readZipMembers, storedZip } from './zip.js';

const DOCX_STYLE_MAP = ["p[style-name='Title'] => h1:fresh", "p[style-name='Subtitle'] => h2:fresh"];

export async function extractDocx(
  bytes: Uint8Array,
  filename: string,
  name: string,
  limits: Pick<IngestLimits, 'maxInflatedMemberBytes' | 'maxInflatedTotalBytes'>,
): Promise<string> {
  const checked = storedZip(readZipMembers(bytes, filename, limits));
  let html: string;
  try {
    const result = await mammoth.convertToHtml(
      { buffer: checked },
      {
        styleMap: DOCX_STYLE_MAP,
        externalFileAccess: false,
        // Drop images instead of inlining them as base64 data URIs.
        convertImage: mammoth.images.imgElement(async () => ({ src: '' })),
      },
    );
    html = result.value;
  } catch (err) {
    if (err instanceof RangeError) throw err; // stack overflow: reported as too deeply nested by the caller
    throw new IngestError('corrupt', filename, `"${name}" could not be read as a Word document; it may be damaged or truncated.`, { cause: err });
  }
  return htmlToPlainText(html);
}
