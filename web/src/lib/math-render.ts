/**
 * Renders the math spans that math.ts's Markdown extension left in a message: KaTeX is loaded the
 * first time a message has math, and writes MathML as DOM nodes into each span.
 */
type Katex = typeof import('katex').default;
let katex: Promise<Katex> | null = null;

/** Render every math span inside `root` (once each); KaTeX is loaded the first time it is needed. */
export async function renderMathIn(root: Element): Promise<void> {
  const spans = [...root.querySelectorAll<HTMLElement>('span.math:not([data-rendered])')];
  if (spans.length === 0) return;
  const k = await (katex ??= import('katex').then((m) => m.default));
  for (const el of spans) {
    const tex = el.textContent ?? '';
    el.dataset.rendered = '';
    try {
      k.render(tex, el, {
        displayMode: el.classList.contains('math-display'),
        output: 'mathml',
        throwOnError: true,
        trust: false,
        strict: 'ignore',
        maxExpand: 200,
        maxSize: 20,
      });
    } catch {
      // TeX KaTeX cannot read stays as the text the model wrote
      el.textContent = tex;
      el.classList.add('math-error');
    }
  }
}
