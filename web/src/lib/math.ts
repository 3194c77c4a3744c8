/**
 * Math in answers: `$…$` and `\(…\)` inline, `$$…$$` and `\[…\]` as blocks.
 *
 * Parsing: a marked extension takes the TeX out before Markdown sees it (Markdown would eat its
 * backslashes and underscores) and emits it as the text of a `<span class="math">`, escaped, so it
 * goes through sanitising like any text. Rendering: after the sanitised HTML is in the page,
 * `renderMathIn` (math-render.ts) loads KaTeX (only when a message has math) and replaces each span's text with
 * KaTeX's MathML, built by KaTeX as DOM nodes (no HTML string, `trust: false`: no links or
 * commands that reach outside). MathML needs neither KaTeX's stylesheet nor its fonts.
 *
 * A dollar sign starts inline math only when the next character is not a space and the closing
 * one follows a non-space and is not followed by a digit, so "$5 and $10" stays text.
 */
import type { MarkedExtension, Tokens } from 'marked';

const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

interface MathToken extends Tokens.Generic {
  type: 'mathBlock' | 'mathInline';
  text: string;
}

const BLOCK = /^(?:\$\$([\s\S]+?)\$\$|\\\[([\s\S]+?)\\\])[ \t]*(?:\n|$)/;
const INLINE = /^(?:\$(?![\s$])((?:\\.|[^\\$\n])*?[^\s\\])\$(?!\d)|\\\(((?:\\.|[^\n])+?)\\\))/;

function span(tex: string, display: boolean): string {
  return `<span class="math${display ? ' math-display' : ''}">${escapeHtml(tex.trim())}</span>`;
}

export const mathExtension: MarkedExtension = {
  extensions: [
    {
      name: 'mathBlock',
      level: 'block',
      start: (src: string) => src.match(/^[ \t]*(?:\$\$|\\\[)/m)?.index,
      tokenizer(src: string): MathToken | undefined {
        const m = BLOCK.exec(src);
        return m ? { type: 'mathBlock', raw: m[0], text: m[1] ?? m[2] ?? '' } : undefined;
      },
      renderer: (token) => `<p>${span((token as MathToken).text, true)}</p>\n`,
    },
    {
      name: 'mathInline',
      level: 'inline',
      start: (src: string) => src.match(/\$|\\\(/)?.index,
      tokenizer(src: string): MathToken | undefined {
        const m = INLINE.exec(src);
        return m ? { type: 'mathInline', raw: m[0], text: m[1] ?? m[2] ?? '' } : undefined;
      },
      renderer: (token) => span((token as MathToken).text, false),
    },
  ],
};
