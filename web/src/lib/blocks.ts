/** Markdown block boundaries for incremental rendering (StreamingMarkdown); no DOM, tested in node. */

/** Offsets where a complete block ends (just after a blank line outside a fence). */
export function blockEnds(text: string): number[] {
  const ends: number[] = [];
  let inFence = false;
  let lineStart = 0;
  let prevBlank = false;
  for (let i = 0; i <= text.length; i++) {
    if (i < text.length && text.charCodeAt(i) !== 10) continue;
    const line = text.slice(lineStart, i);
    const trimmed = line.trimStart();
    if (trimmed.startsWith('```') || trimmed.startsWith('~~~')) inFence = !inFence;
    const blank = trimmed.trim() === '';
    if (blank && !prevBlank && !inFence && lineStart > 0 && i < text.length) ends.push(i + 1);
    prevBlank = blank;
    lineStart = i + 1;
  }
  return ends;
}
