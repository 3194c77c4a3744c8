/**
 * HTML → plain text (also the second half of DOCX extraction: mammoth → HTML → here).
 *
 * html-to-text, no word wrapping; script/style/noscript/template/svg/iframe and images dropped;
 * links keep their text only; headings become Markdown `#` lines so the chunker can split at
 * them; lists get "- " / "1. " prefixes.
 *
 * html-to-text walks the tree recursively and overflows the stack somewhere between 2,000 and
 * 5,000 levels of nesting (5,000 nested `<div>`s are 55 KB). Deeper markup is first flattened
 * (see flattenDeepHtml): elements below MAX_DEPTH lose their tags but keep their text.
 */
import { Parser } from 'htmlparser2';
import { htmlToText } from 'html-to-text';
import type { FormatCallback, HtmlToTextOptions } from 'html-to-text';

/** Deepest element nesting handed to html-to-text (real documents stay far below). */
export const MAX_HTML_DEPTH = 256;

/** Heading → "## Heading" on its own paragraph. */
const atxHeading: FormatCallback = (elem, walk, builder, formatOptions) => {
  const level = Math.min(6, Math.max(1, Number(formatOptions['level']) || 1));
  builder.openBlock({ leadingLineBreaks: 2 });
  walk(elem.children, builder);
  builder.closeBlock({
    trailingLineBreaks: 2,
    blockTransform: (s: string) => {
      const t = s.replace(/\s+/g, ' ').trim();
      return t ? `${'#'.repeat(level)} ${t}` : '';
    },
  });
};

const SKIP = ['script', 'style', 'noscript', 'template', 'svg', 'canvas', 'iframe', 'object', 'embed', 'img', 'picture', 'video', 'audio', 'head', 'hr'];

const HTML_OPTIONS: HtmlToTextOptions = {
  wordwrap: false,
  formatters: { atxHeading },
  selectors: [
    ...SKIP.map((selector) => ({ selector, format: 'skip' })),
    { selector: 'a', options: { ignoreHref: true } },
    ...[1, 2, 3, 4, 5, 6].map((level) => ({ selector: `h${level}`, format: 'atxHeading', options: { level } })),
    { selector: 'ul', options: { itemPrefix: '- ' } },
    { selector: 'table', format: 'dataTable', options: { uppercaseHeaderCells: false, maxColumnWidth: 1000, colSpacing: 3 } },
  ],
};

export function htmlToPlainText(html: string): string {
  const safe = flattenDeepHtml(html, MAX_HTML_DEPTH);
  return htmlToText(safe, {
    ...HTML_OPTIONS,
    // The default limit (16 MiB) silently truncates; the upload size limit applies instead.
    limits: { maxInputLength: Math.max(safe.length + 1, 1 << 24) },
  });
}

/**
 * The same HTML with the tags of elements nested deeper than `maxDepth` removed (their text
 * and shallower markup kept byte for byte). One streaming pass of htmlparser2 — the parser
 * html-to-text uses, so both see the same tree — without building a DOM or recursing; the
 * input comes back unchanged (same string) when it is not that deep.
 */
export function flattenDeepHtml(html: string, maxDepth: number): string {
  const cuts: Array<[number, number]> = [];
  const dropped: boolean[] = [];
  let depth = 0;
  const parser: Parser = new Parser(
    {
      onopentag() {
        depth++;
        const drop = depth > maxDepth;
        dropped.push(drop);
        if (drop) cuts.push([parser.startIndex, parser.endIndex + 1]);
      },
      onclosetag(_name, isImplied) {
        depth--;
        if (dropped.pop() === true && !isImplied) cuts.push([parser.startIndex, parser.endIndex + 1]);
      },
    },
    { decodeEntities: false },
  );
  parser.end(html);
  if (cuts.length === 0) return html;
  cuts.sort((a, b) => a[0] - b[0]);
  let out = '';
  let pos = 0;
  for (const [s, e] of cuts) {
    if (s < pos) continue;
    // A space where a tag was, so text of adjacent dropped blocks does not run together.
    out += html.slice(pos, s) + ' ';
    pos = e;
  }
  return out + html.slice(pos);
}
