/**
 * A message's Markdown, rendered by lib/markdown.ts into sanitised nodes and inserted as nodes
 * (never as an HTML string: see there why). The nodes are parsed once per text; a copy is
 * inserted, so a remount can insert them again. A finished answer's math is rendered by KaTeX
 * into the inserted nodes (lib/math-render.ts).
 */
import { useLayoutEffect, useMemo, useRef } from 'preact/hooks';
import { renderMarkdown } from '../lib/markdown';
import { renderMathIn } from '../lib/math-render';

/** `decorate` changes the inserted copy with DOM calls (citations as buttons, scrolling tables: lib/answer-html.ts). */
export function Markdown({
  text,
  highlight,
  class: className,
  decorate,
}: {
  text: string;
  highlight: boolean;
  class: string;
  decorate?: (root: DocumentFragment) => void;
}) {
  const nodes = useMemo(() => renderMarkdown(text, { highlight }), [text, highlight]);
  const ref = useRef<HTMLDivElement>(null);
  useLayoutEffect(() => {
    const el = ref.current;
    if (!el) return;
    const copy = nodes.cloneNode(true) as DocumentFragment;
    decorate?.(copy);
    el.replaceChildren(copy);
    // TeX is rendered once the answer is complete (KaTeX loads with the first message that has any)
    if (highlight) void renderMathIn(el);
  }, [nodes, highlight, decorate]);
  return <div class={className} ref={ref} />;
}
