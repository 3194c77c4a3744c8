/**
 * Math in answers, parsed in node: the TeX reaches the page exactly as the model wrote it
 * (backslashes, underscores and asterisks untouched by Markdown), escaped as text, and prices in
 * dollars stay prose. KaTeX's MathML for what the spans hold is checked here too.
 */
import katex from 'katex';
import { Marked } from 'marked';
import { describe, expect, it } from 'vitest';
import { mathExtension } from '../../web/src/lib/math.js';

const parser = new Marked({ gfm: true, breaks: true }).use(mathExtension);
const html = (md: string) => parser.parse(md, { async: false });
/** The TeX of each math span, unescaped as the browser would read its text. */
const texOf = (out: string) =>
  [...out.matchAll(/<span class="math( math-display)?">([^<]*)<\/span>/g)].map((m) => ({
    display: !!m[1],
    tex: m[2]!.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&'),
  }));

describe('math in Markdown', () => {
  it('keeps inline TeX as written, with its backslashes and underscores', () => {
    const out = html('Euler: $e^{i\\pi} + 1 = 0$ and \\(\\alpha_1 * \\beta_2\\) too.');
    expect(texOf(out)).toEqual([
      { display: false, tex: 'e^{i\\pi} + 1 = 0' },
      { display: false, tex: '\\alpha_1 * \\beta_2' },
    ]);
    expect(out).not.toContain('<em>');
  });

  it('takes $$…$$ and \\[…\\] blocks over several lines', () => {
    const out = html('Sum:\n\n$$\n\\sum_{k=1}^{n} k = \\frac{n(n+1)}{2}\n$$\n\nand\n\n\\[ a_{ij} \\le b \\]\n');
    expect(texOf(out)).toEqual([
      { display: true, tex: '\\sum_{k=1}^{n} k = \\frac{n(n+1)}{2}' },
      { display: true, tex: 'a_{ij} \\le b' },
    ]);
  });

  it('leaves prices, code and escaped dollars alone', () => {
    expect(texOf(html('It costs $5 and $10 in total.'))).toEqual([]);
    expect(texOf(html('Use `$x$` in code.\n\n```\n$$y$$\n```\n'))).toEqual([]);
    expect(html('A lone $ sign.')).toContain('A lone $ sign.');
  });

  it('escapes markup inside math: it is text until KaTeX reads it', () => {
    const out = html('$<img src=x onerror=alert(1)>$');
    expect(out).not.toContain('<img');
    expect(texOf(out)).toEqual([{ display: false, tex: '<img src=x onerror=alert(1)>' }]);
  });

  it('is what KaTeX renders to MathML, and KaTeX refuses links without trust', () => {
    const tex = texOf(html('$\\frac{a}{b}$'))[0]?.tex ?? '';
    const mathml = katex.renderToString(tex, { output: 'mathml', throwOnError: true, trust: false });
    expect(mathml).toContain('<mfrac>');
    const link = katex.renderToString('\\href{javascript:alert(1)}{x}', { output: 'mathml', throwOnError: false, trust: false });
    // the TeX stays only as the annotation's text: no link is made
    expect(link).not.toMatch(/href=|<a\b/);
  });
});
