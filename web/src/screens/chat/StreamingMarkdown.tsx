/**
 * An answer still arriving, rendered in blocks: the text is cut at blank lines outside code
 * fences; every block but the last is complete and never changes again (the text only grows), so
 * it is parsed and sanitised once and memoised. Each update re-parses only the last block, instead
 * of the whole answer (which made streaming quadratic). When the answer is done, MessageView
 * renders it whole once, so lists and numbering that span blank lines come out right.
 */
import { memo } from 'preact/compat';
import { Markdown } from '../../components/Markdown';
import { blockEnds } from '../../lib/blocks';

const Block = memo(function Block({ text }: { text: string }) {
  return <Markdown class="md-block" text={text} highlight={false} />;
});

export function StreamingMarkdown({ text }: { text: string }) {
  const ends = blockEnds(text);
  const blocks: string[] = [];
  let start = 0;
  for (const end of ends) {
    blocks.push(text.slice(start, end));
    start = end;
  }
  blocks.push(text.slice(start));
  return (
    <div class="markdown streaming">
      {blocks.map((b, i) => (
        <Block key={i} text={b} />
      ))}
    </div>
  );
}
