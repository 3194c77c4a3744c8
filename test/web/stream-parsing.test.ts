/**
 * The web app's two pure pieces of stream handling, run in node: the SSE reader (events split
 * across network chunks, comments, ids, CRLF) and the Markdown block boundaries used to render a
 * streaming answer incrementally.
 */
import { describe, expect, it } from 'vitest';
import { blockEnds } from '../../web/src/lib/blocks.js';
import { readSse } from '../../web/src/api/sse.js';

function streamOf(parts: string[]): ReadableStream<Uint8Array> {
  const enc = new TextEncoder();
  return new ReadableStream({
    start(c) {
      for (const p of parts) c.enqueue(enc.encode(p));
      c.close();
    },
  });
}

async function collect(parts: string[]) {
  const out: Array<{ event: string; data: unknown }> = [];
  for await (const e of readSse(streamOf(parts))) out.push(e);
  return out;
}

describe('readSse', () => {
  it('reads events split anywhere across chunks, skipping comments, ids and retry', async () => {
    const wire =
      'retry: 3000\n\nid: 1\nevent: start\ndata: {"type":"start","threadId":"t"}\n\n: ping\n\nid: 2\nevent: delta\ndata: {"type":"delta","content":"héllo"}\n\n';
    const whole = await collect([wire]);
    expect(whole).toEqual([
      { event: 'start', data: { type: 'start', threadId: 't' } },
      { event: 'delta', data: { type: 'delta', content: 'héllo' } },
    ]);
    // Every split point, including inside the two-byte "é", gives the same events.
    const bytes = new TextEncoder().encode(wire);
    for (let cut = 1; cut < bytes.length; cut += 7) {
      const dec = new TextDecoder('latin1');
      const a = bytes.slice(0, cut);
      const b = bytes.slice(cut);
      const parts = new ReadableStream<Uint8Array>({
        start(c) {
          c.enqueue(a);
          c.enqueue(b);
          c.close();
        },
      });
      const got: unknown[] = [];
      for await (const e of readSse(parts)) got.push(e);
      expect(got, `split at ${cut} (${dec.decode(a).slice(-10)})`).toEqual(whole);
    }
  });

  it('accepts CRLF line ends and multi-line data, and yields a last event without a blank line', async () => {
    const got = await collect(['event: done\r\ndata: {"type":"done",\r\ndata: "finishReason":"stop"}\r\n\r\n', 'event: error\ndata: {"type":"error"}']);
    expect(got).toEqual([
      { event: 'done', data: { type: 'done', finishReason: 'stop' } },
      { event: 'error', data: { type: 'error' } },
    ]);
  });
});

describe('blockEnds', () => {
  const blocks = (text: string) => {
    const out: string[] = [];
    let start = 0;
    for (const end of blockEnds(text)) {
      out.push(text.slice(start, end));
      start = end;
    }
    out.push(text.slice(start));
    return out;
  };

  it('cuts at blank lines, keeping every character', () => {
    const text = 'First paragraph.\n\nSecond\nstill second.\n\n\n- a\n- b';
    expect(blocks(text)).toEqual(['First paragraph.\n\n', 'Second\nstill second.\n\n', '\n- a\n- b']);
    expect(blocks(text).join('')).toBe(text);
  });

  it('never cuts inside a code fence, open or closed', () => {
    const closed = 'Intro\n\n```ts\nconst a = 1;\n\nconst b = 2;\n```\n\nAfter';
    expect(blocks(closed)).toEqual(['Intro\n\n', '```ts\nconst a = 1;\n\nconst b = 2;\n```\n\n', 'After']);
    const open = 'Intro\n\n~~~\ncode\n\nmore code';
    expect(blocks(open)).toEqual(['Intro\n\n', '~~~\ncode\n\nmore code']);
  });

  it('only moves forward as text is appended (earlier blocks never change)', () => {
    const full = 'One.\n\nTwo.\n\n```\nx\n\ny\n```\n\nThree.\n\nFour.';
    let previous: number[] = [];
    for (let n = 1; n <= full.length; n++) {
      const ends = blockEnds(full.slice(0, n));
      expect(ends.slice(0, previous.length)).toEqual(previous);
      previous = ends;
    }
  });
});
