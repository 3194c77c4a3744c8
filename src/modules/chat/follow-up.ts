/**
 * A follow-up question ("and what about the second one?") rewritten by the turn's model as a
 * standalone search query, for workspaces whose `followUpSearch` is `rewrite` (docs/API.md,
 * Follow-ups). The other way, carrying the previous question's rarest words, is the retrieval's
 * own (retrieval/query.ts) and needs no model.
 */
import { countTokens } from '../../ingest/tokens.js';
import { classifyProviderError, describeForLog, getAdapter } from '../../providers/index.js';
import type { ChatMessage, ProviderTarget, ProviderTimeouts } from '../../providers/types.js';
import type { SearchRewrite } from '../../db/schema/chat.js';

/** The rewrite sees at most this many messages before the question, newest last… */
const CONVERSATION_MESSAGES = 4;
/** …each cut to this many characters (an answer's opening names what it is about). */
const MESSAGE_CHARS = 1_500;
const QUESTION_CHARS = 4_000;
/** A search query, not an answer: longer replies are cut. */
const MAX_OUTPUT_TOKENS = 80;
const QUERY_CHARS = 500;

const INSTRUCTIONS =
  'Rewrite the follow-up question below as one standalone question for searching documents. ' +
  'Use the conversation only to make clear what the question refers to (names, "it", "the second one"). ' +
  'Do not answer it. Reply with the rewritten question only, on one line.';

/**
 * What a rewrite may cost at most, in tokens (its prompt's bound plus its output cap): what a
 * turn's budget reservation adds when the turn may rewrite, before its history is known.
 */
export const REWRITE_ALLOWANCE_TOKENS =
  Math.ceil((INSTRUCTIONS.length + CONVERSATION_MESSAGES * (MESSAGE_CHARS + 20) + QUESTION_CHARS + 40) / 2) + MAX_OUTPUT_TOKENS;

/** The one user message of the rewrite call (no system message: every model and wrapper takes it). */
export function rewriteMessages(conversationOldestFirst: ReadonlyArray<{ role: string; content: string }>, question: string): ChatMessage[] {
  const lines = conversationOldestFirst
    .filter((m) => m.role === 'user' || m.role === 'assistant')
    .slice(-CONVERSATION_MESSAGES)
    .map((m) => `${m.role === 'user' ? 'User' : 'Assistant'}: ${clip(m.content, MESSAGE_CHARS)}`);
  return [{ role: 'user', content: `${INSTRUCTIONS}\n\nConversation:\n${lines.join('\n')}\n\nFollow-up question: ${clip(question, QUESTION_CHARS)}` }];
}

/** The query in a model's reply: its first non-empty line without a label or quotes; null when nothing usable is left. */
export function queryFromReply(reply: string): string | null {
  const line = reply
    .split('\n')
    .map((l) => l.trim())
    .find((l) => l.length > 0);
  if (!line) return null;
  const q = line
    .replace(/^(?:standalone |rewritten )?(?:question|query)\s*:\s*/i, '')
    .replace(/^["'\u201c\u2018`]+|["'\u201d\u2019`]+$/g, '')
    .trim();
  return q ? clip(q, QUERY_CHARS) : null;
}

/** A rewrite call that answered: the query (null when the reply was unusable) and what the call used. */
export interface Rewritten {
  rewrite: SearchRewrite | null;
  used: { promptTokens: number; completionTokens: number };
}

export interface RewriteCall {
  target: ProviderTarget;
  timeouts: ProviderTimeouts;
  conversationOldestFirst: ReadonlyArray<{ role: string; content: string }>;
  question: string;
  signal?: AbortSignal;
}

/**
 * Ask the model. Never throws: a failed call or an unusable reply is null (the turn then carries
 * terms instead), with `onFailure` told why; a reply is returned with what it used (the provider's
 * count, else Atrium's), even when it was unusable, so the turn can still account for it.
 */
export async function rewriteFollowUp(c: RewriteCall, onFailure: (why: string) => void): Promise<Rewritten | null> {
  const messages = rewriteMessages(c.conversationOldestFirst, c.question);
  try {
    const adapter = getAdapter(c.target.apiBase, c.target.connectionType);
    const r = await adapter.complete({
      target: c.target,
      messages,
      params: { temperature: 0, maxTokens: MAX_OUTPUT_TOKENS },
      timeouts: c.timeouts,
      ...(c.signal ? { signal: c.signal } : {}),
    });
    const reported = r.usage.promptTokens > 0 || r.usage.completionTokens > 0;
    const used = reported
      ? { promptTokens: r.usage.promptTokens, completionTokens: r.usage.completionTokens }
      : { promptTokens: countTokens(messages[0]!.content), completionTokens: countTokens(r.content) };
    const query = queryFromReply(r.content);
    if (!query) onFailure('the model\u2019s rewrite was empty');
    return { rewrite: query ? { query, ...used } : null, used };
  } catch (err) {
    onFailure(describeForLog(classifyProviderError(err)));
    return null;
  }
}

function clip(s: string, n: number): string {
  const t = s.trim();
  return t.length > n ? `${t.slice(0, n)}\u2026` : t;
}
