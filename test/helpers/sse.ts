export interface SseEvent {
  /** the `id:` line (1, 2, 3… per stream) */
  id: string | undefined;
  event: string;
  data: Record<string, unknown>;
}

/**
 * Parse a text/event-stream body into its events (the `data` JSON parsed). Blocks without data —
 * the `retry:` line and `: ping` comments — are not events; `parseSseControl` reports them.
 */
export function parseSse(text: string): SseEvent[] {
  return blocks(text)
    .filter((lines) => lines.some((l) => l.startsWith('data: ')))
    .map((lines) => {
      const id = lines.find((l) => l.startsWith('id: '))?.slice(4);
      const event = lines.find((l) => l.startsWith('event: '))?.slice(7) ?? 'message';
      const data = lines
        .filter((l) => l.startsWith('data: '))
        .map((l) => l.slice(6))
        .join('\n');
      return { id, event, data: JSON.parse(data) as Record<string, unknown> };
    });
}

/** The stream's `retry:` values and the number of `: ping` comments. */
export function parseSseControl(text: string): { retry: number[]; pings: number } {
  const lines = blocks(text).flat();
  return {
    retry: lines.filter((l) => l.startsWith('retry: ')).map((l) => Number(l.slice(7))),
    pings: lines.filter((l) => l === ': ping').length,
  };
}

function blocks(text: string): string[][] {
  return text
    .split('\n\n')
    .filter((block) => block.trim())
    .map((block) => block.split('\n'));
}
