/**
 * A message's Markdown, rendered by lib/markdown.ts into sanitised nodes and inserted as nodes
 * (never as an HTML string: see there why). The nodes are parsed once per text; a copy is
 * inserted, so a remount can insert them again.
 */
import { useLayoutEffect, useMemo, useRef } from 'preact/hooks';
import { renderMarkdown } from '../lib/markdown';

export function Markdown({ text, highlight, class: className }: { text: string; highlight: boolean; class: string }) {
  const nodes = useMemo(() => renderMarkdown(text, { highlight }), [text, highlight]);
  const ref = useRef<HTMLDivElement>(null);
  useLayoutEffect(() => {
    ref.current?.replaceChildren(nodes.cloneNode(true));
  }, [nodes]);
  return <div class={className} ref={ref} />;
}
