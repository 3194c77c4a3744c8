export interface SseEvent {
  event: string;
  data: Record<string, unknown>;
}

/** Parse a text/event-stream body into events (the `data` JSON parsed). */
export function parseSse(text: string): SseEvent[] {
  return text
    .split('\n\n')
    .filter((block) => block.trim())
    .map((block) => {
      const lines = block.split('\n');
      const event = lines.find((l) => l.startsWith('event: '))?.slice(7) ?? 'message';
      const data = lines.filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n');
      return { event, data: JSON.parse(data) as Record<string, unknown> };
    });
}
