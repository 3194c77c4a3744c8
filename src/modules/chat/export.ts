/**
 * A thread as a file (GET …/history/{threadId}/export): Markdown or JSON, written page by page so
 * that a long thread is never held in memory whole (docs/DECISIONS.md, "Conversation export").
 */
import type { StoredSource, StoredTurnError } from '../../db/schema/chat.js';

export type ExportFormat = 'md' | 'json';

export interface ExportThread {
  id: string;
  workspaceId: string;
  title: string;
  created: Date;
  updated: Date;
}

export interface ExportMessage {
  id: string;
  role: 'system' | 'user' | 'assistant';
  content: string;
  modelId: string | null;
  modelName: string | null;
  status: 'ok' | 'error' | 'interrupted';
  error: StoredTurnError | null;
  sources: StoredSource[] | null;
  created: Date;
}

export const EXPORT_CONTENT_TYPES: Record<ExportFormat, string> = {
  md: 'text/markdown; charset=utf-8',
  json: 'application/json; charset=utf-8',
};

/** The file, in chunks: a head, one chunk per message, a tail. */
export async function* exportChunks(thread: ExportThread, pages: AsyncIterable<ExportMessage[]>, format: ExportFormat): AsyncGenerator<string> {
  if (format === 'json') {
    const head = { id: thread.id, workspaceId: thread.workspaceId, title: thread.title, created: iso(thread.created), updated: iso(thread.updated) };
    yield `${JSON.stringify(head).slice(0, -1)},"messages":[`;
    let first = true;
    for await (const page of pages) {
      // one chunk a message: the response's back-pressure then holds the reading of the next page
      for (const m of page) {
        yield (first ? '' : ',') + JSON.stringify(jsonMessage(m));
        first = false;
      }
    }
    yield ']}\n';
    return;
  }
  yield `# ${oneLine(thread.title) || 'Chat'}\n\n_Exported from Atrium. Started ${when(thread.created)}, last updated ${when(thread.updated)}._\n`;
  for await (const page of pages) for (const m of page) yield markdownMessage(m);
}

function jsonMessage(m: ExportMessage) {
  return {
    id: m.id,
    role: m.role,
    content: m.content,
    modelId: m.modelId,
    modelName: m.modelName,
    status: m.status,
    error: m.error,
    sources: (m.sources ?? []).map((s) => ({ filename: s.filename, excerpt: s.excerpt, plusId: s.plusId, fileId: s.fileId })),
    created: iso(m.created),
  };
}

function markdownMessage(m: ExportMessage): string {
  const who = m.role === 'user' ? 'User' : m.role === 'system' ? 'System' : `Assistant · ${oneLine(m.modelName ?? '') || 'unknown model'}`;
  const out = [`\n---\n\n## ${who}\n\n_${when(m.created)}_\n`];
  if (m.status === 'error')
    out.push(`\n> **Failed:** ${oneLine(m.error?.detail ?? 'the turn failed')}${m.error ? ` (${m.error.status} ${oneLine(m.error.code)})` : ''}\n`);
  if (m.content !== '') out.push(`\n${contained(m.content)}\n`);
  if (m.status === 'interrupted')
    out.push(`\n> **Interrupted:** the answer was cut off${m.error ? `: ${oneLine(m.error.detail)} (${m.error.status} ${oneLine(m.error.code)})` : ''}.\n`);
  const sources = m.sources ?? [];
  if (sources.length > 0) {
    out.push('\n**Sources**\n\n');
    sources.forEach((s, i) => out.push(`${i + 1}. **${oneLine(s.filename ?? 'untitled')}**: ${oneLine(s.excerpt)}\n`));
  }
  return out.join('');
}

/**
 * A message's text as written, plus whatever closes a construct it left open, so that the rest of
 * the document is not swallowed: an unclosed fenced code block gets its closing fence, an unclosed
 * HTML comment its `-->`. Nothing in the text itself is changed or escaped.
 */
export function contained(text: string): string {
  let body = text.replace(/\r\n?/g, '\n').replace(/\n+$/, '');
  let fence: { char: string; len: number } | null = null;
  for (const line of body.split('\n')) {
    const m = /^ {0,3}(`{3,}|~{3,})(.*)$/.exec(line);
    if (!m) continue;
    const run = m[1]!;
    if (fence === null) {
      // a backtick fence's info string may not contain a backtick
      if (run[0] === '`' && m[2]!.includes('`')) continue;
      fence = { char: run[0]!, len: run.length };
    } else if (run[0] === fence.char && run.length >= fence.len && m[2]!.trim() === '') fence = null;
  }
  if (fence) body += `\n${fence.char.repeat(fence.len)}`;
  return closeComment(body);
}

function closeComment(s: string): string {
  const open = s.lastIndexOf('<!--');
  return open !== -1 && s.indexOf('-->', open + 4) === -1 ? `${s} -->` : s;
}

const iso = (d: Date) => d.toISOString();
/** `2026-11-27 17:02 UTC` */
const when = (d: Date) => `${d.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
/**
 * Text kept on one line (a title, a model or file name, an excerpt, an error): line breaks and runs
 * of whitespace become one space, and an HTML comment it opens is closed.
 */
const oneLine = (s: string) => closeComment(s.replace(/\s+/g, ' ').trim());
