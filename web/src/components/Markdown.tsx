/**
 * A message's Markdown, rendered by lib/markdown.ts into sanitised nodes and inserted as nodes
 * (never as an HTML string: see there why). The nodes are parsed once per text; a copy is
 * inserted, so a remount can insert them again. A finished answer's math is rendered by KaTeX
 * into the inserted nodes (lib/math-render.ts).
 */
import { useLayoutEffect, useMemo, useRef } from 'preact/hooks';
import { renderMarkdown } from '../lib/markdown';
import { renderMathIn } from '../lib/math-render';

export function Markdown({ text, highlight, class: className }: { text: string; highlight: boolean; class: string }) {
  const nodes = useMemo(() => renderMarkdown(text, { highlight }), [text, highlight]);
  const ref = useRef<HTMLDivElement>(null);
  useLayoutEffect(() => {
    const el = ref.current;
    if (!el) return;
    el.replaceChildren(nodes.cloneNode(true));
    // TeX is rendered once the answer is complete (KaTeX loads with the first message that has any)
    if (highlight) void renderMathIn(el);
  }, [nodes, highlight]);
  return <div class={className} ref={ref} />;
}
