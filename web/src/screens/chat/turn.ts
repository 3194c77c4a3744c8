/**
 * One chat turn over the stream route: POST, then read the SSE events into callbacks. Every way
 * a turn can end is reported once, through `onEnd`:
 *   ok          `done` arrived
 *   error       the server refused before streaming (problem document: 400, 404, 429, 502…) or sent an `error` event
 *   interrupted the reader aborted (Stop, Esc): the server keeps the partial answer, marked interrupted
 *   lost        the connection broke or the stream ended without `done`/`error`
 */
import { networkProblem, problemOf, raise, type Problem, type Source, type StreamEvent } from '../../api/client';
import type { paths } from '../../api/openapi';
import { readSse } from '../../api/sse';
import { t } from '../../i18n';

export type TurnBody = NonNullable<paths['/api/v1/chat/{workspaceId}/completions/stream']['post']['requestBody']>['content']['application/json'];

export type TurnEnd = { kind: 'ok'; finishReason: string } | { kind: 'error'; problem: Problem } | { kind: 'interrupted' } | { kind: 'lost'; problem: Problem };

export interface TurnHandlers {
  onStart(e: { threadId: string; messageId: string; modelId: string }): void;
  onSources(sources: Source[]): void;
  onDelta(text: string): void;
  /** the turn calls one of the workspace's tools, then has its result */
  onToolCall?(call: { id: string; name: string; arguments: string }): void;
  onToolResult?(result: { id: string; ok: boolean; content: string }): void;
  /** an image the model made (image models) */
  onImage(image: { id: string; mimeType: string; width: number; height: number }): void;
  onEnd(end: TurnEnd): void;
}

export async function streamTurn(workspaceId: string, body: TurnBody, h: TurnHandlers, signal: AbortSignal): Promise<void> {
  let res: Response;
  try {
    res = await fetch(`/api/v1/chat/${encodeURIComponent(workspaceId)}/completions/stream`, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify(body),
      signal,
    });
  } catch {
    return h.onEnd(signal.aborted ? { kind: 'interrupted' } : { kind: 'error', problem: networkProblem() });
  }
  if (!res.ok || !res.body) {
    const problem = await problemOf(res);
    if (problem.status === 401) {
      try {
        raise(problem);
      } catch {
        // the app returns to the sign-in screen
      }
    }
    return h.onEnd({ kind: 'error', problem });
  }
  try {
    for await (const { data } of readSse(res.body, signal)) {
      const e = data as StreamEvent;
      switch (e.type) {
        case 'start':
          h.onStart(e);
          break;
        case 'sources':
          h.onSources(e.sources);
          break;
        case 'delta':
          h.onDelta(e.content);
          break;
        case 'tool_call':
          h.onToolCall?.(e);
          break;
        case 'tool_result':
          h.onToolResult?.(e);
          break;
        case 'image':
          h.onImage(e);
          break;
        case 'done':
          return h.onEnd({ kind: 'ok', finishReason: e.finishReason });
        case 'error':
          return h.onEnd({ kind: 'error', problem: { type: 'about:blank', title: t('turn.modelFailed'), status: e.status, code: e.code, detail: e.detail } });
      }
    }
  } catch {
    if (signal.aborted) return h.onEnd({ kind: 'interrupted' });
    return h.onEnd({ kind: 'lost', problem: networkProblem(t('turn.connectionLost')) });
  }
  if (signal.aborted) return h.onEnd({ kind: 'interrupted' });
  h.onEnd({ kind: 'lost', problem: networkProblem(t('turn.stopped')) });
}
