import type { StoredSource } from '../../db/schema.js';
import { AppError, badRequest, type ErrorKind } from '../../errors.js';
import type { ChatMessage, ImageContent, Usage } from '../../providers/types.js';
import { errorOfEvent, type TurnEvent, type TurnRequest, type TurnService } from '../chat/turns.js';
import type { Principal } from '../../policy/index.js';
import type { WorkspaceModelT } from '../workspaces/schema.js';
import type { WorkspacesService } from '../workspaces/service.js';
import type {
  OpenAIChatCompletionChunkT,
  OpenAIChatCompletionT,
  OpenAIChatRequestT,
  OpenAIImageRequestT,
  OpenAIImagesResponseT,
  OpenAIMessageT,
  OpenAIModelListT,
  OpenAIModelT,
} from './schema.js';
import { imageOfPart } from './images.js';
import { checkedCall, checkToolExchanges, refuseLegacyFunctions, toolCallDelta, toolOptions } from './tools.js';

/**
 * The OpenAI chat-completions protocol over Atrium's one chat pipeline: this module only
 * translates. A request becomes a `ChatCompletionRequestT` for `TurnService.run` (the same turn
 * as /api/v1/chat: settings, context, logging, failures, abort); its events become OpenAI's
 * objects. No HTTP here: the route frames the chunks as SSE and renders errors.
 */

/** A stream item: a chunk, or the error of a turn that failed after the stream started. */
export type CompatStreamItem = { chunk: OpenAIChatCompletionChunkT } | { error: { kind: ErrorKind; code: string; message: string } };

const MODEL_ID =
  /^workspace\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(?:\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}))?$/i;

function modelNotFound(model: string): AppError {
  return new AppError('not_found', 'model_not_found', `The model '${model.slice(0, 200)}' does not exist or you do not have access to it`, [
    { path: 'body/model', message: 'is not a workspace model you can use (see GET /v1/models)' },
  ]);
}

/** Atrium's finish reasons as OpenAI's (`other` has no OpenAI name: it ended, so `stop`). */
function finishReason(r: string): 'stop' | 'length' | 'content_filter' | 'tool_calls' {
  return r === 'length' || r === 'content_filter' || r === 'tool_calls' ? r : 'stop';
}

const usageOf = (u: Usage) => ({ prompt_tokens: u.promptTokens, completion_tokens: u.completionTokens, total_tokens: u.totalTokens });
const unixSeconds = (d: Date) => Math.floor(d.getTime() / 1000);

/** The text of a message's content and its images (`image_url` parts, user messages only); other parts are refused. */
function contentOf(m: OpenAIMessageT, i: number): { text: string; images: ImageContent[] } {
  const c = m.content;
  if (c === undefined || c === null) return { text: '', images: [] };
  if (typeof c === 'string') return { text: c, images: [] };
  const texts: string[] = [];
  const images: ImageContent[] = [];
  c.forEach((part, j) => {
    const path = `body/messages/${i}/content/${j}`;
    if (part.type === 'image_url' && m.role === 'user') {
      images.push(imageOfPart(part, path));
      return;
    }
    if (part.type !== 'text' || typeof part.text !== 'string') {
      throw badRequest('unsupported_content', `Only text (and, in user messages, image_url) content parts are supported, not '${part.type.slice(0, 100)}'`, [
        { path, message: 'must be a text part {type: "text", text} or a user image_url part' },
      ]);
    }
    texts.push(part.text);
  });
  return { text: texts.join('\n'), images };
}

/** One OpenAI message as an Atrium turn message; `developer` is a system message, text parts are joined. */
function toTurnMessage(m: OpenAIMessageT, i: number): ChatMessage {
  const role = m.role === 'developer' ? 'system' : m.role;
  if (role !== 'system' && role !== 'user' && role !== 'assistant' && role !== 'tool') {
    throw badRequest('unsupported_role', `Message role '${m.role.slice(0, 100)}' is not supported: use system, developer, user, assistant or tool`, [
      { path: `body/messages/${i}/role`, message: 'must be system, developer, user, assistant or tool' },
    ]);
  }
  const calls = m.tool_calls ?? [];
  if (calls.length > 0 && role !== 'assistant') {
    throw badRequest('validation_failed', 'Only an assistant message carries tool_calls', [
      { path: `body/messages/${i}/tool_calls`, message: 'is only for assistant messages' },
    ]);
  }
  const { text: content, images } = contentOf(m, i);
  if (role === 'tool') {
    if (!m.tool_call_id) {
      throw badRequest('validation_failed', 'A tool message must name the call it answers', [
        { path: `body/messages/${i}/tool_call_id`, message: 'is required on a tool message' },
      ]);
    }
    return { role, content, toolCallId: m.tool_call_id };
  }
  if (calls.length > 0) return { role: 'assistant', content, toolCalls: calls.map((c, j) => checkedCall(c, `body/messages/${i}/tool_calls/${j}`)) };
  return images.length > 0 ? { role, content, images } : { role, content };
}

export class OpenAICompatService {
  constructor(
    private readonly workspaces: WorkspacesService,
    private readonly turns: TurnService,
  ) {}

  /** One entry per visible workspace (its first model) and one per model in it. */
  async listModels(caller: Principal): Promise<OpenAIModelListT> {
    const list = await this.workspaces.list(caller);
    const data: OpenAIModelListT['data'] = [];
    for (const w of list) {
      const created = unixSeconds(new Date(w.created));
      // Workspace.models is a $ref in the schema (typed unknown): its items are WorkspaceModels.
      const models = w.models as WorkspaceModelT[];
      const first = models[0];
      const info = { workspaceId: w.id, workspaceName: w.name };
      data.push({
        id: `workspace/${w.id}`,
        object: 'model',
        created,
        owned_by: 'atrium',
        atrium: { ...info, modelId: first?.modelId ?? null, modelName: first?.modelName ?? null },
      });
      for (const m of models) {
        data.push({
          id: `workspace/${w.id}/${m.modelId}`,
          object: 'model',
          created,
          owned_by: 'atrium',
          atrium: { ...info, modelId: m.modelId, modelName: m.modelName },
        });
      }
    }
    return { object: 'list', data };
  }

  /** One entry of {@link listModels} by its id; 404 `model_not_found` when the caller cannot see it. */
  async getModel(caller: Principal, id: string): Promise<OpenAIModelT> {
    if (!MODEL_ID.test(id)) throw modelNotFound(id);
    const found = (await this.listModels(caller)).data.find((m) => m.id === id.toLowerCase());
    if (!found) throw modelNotFound(id);
    return found;
  }

  /** The plain answer: one `chat.completion`. */
  async complete(caller: Principal, body: OpenAIChatRequestT, signal: AbortSignal): Promise<OpenAIChatCompletionT> {
    const t = await this.translate(caller, body);
    const a = await this.turns.complete(caller, t.workspaceId, t.req, signal, { store: t.store });
    const calls = (a.toolCalls ?? []).map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.name, arguments: c.arguments } }));
    return {
      id: `chatcmpl-${a.messageId}`,
      object: 'chat.completion',
      created: unixSeconds(new Date(a.created)),
      model: body.model,
      system_fingerprint: null,
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            // OpenAI's form: an answer of only tool calls has no content.
            content: calls.length > 0 && !a.message.content ? null : a.message.content,
            refusal: null,
            ...(calls.length > 0 ? { tool_calls: calls } : {}),
          },
          finish_reason: finishReason(a.finishReason),
          logprobs: null,
        },
      ],
      usage: usageOf(a.usage),
      ...(a.sources.length > 0 ? { atrium_sources: a.sources } : {}),
      atrium: { threadId: t.store ? a.threadId : null, messageId: t.store ? a.messageId : null, modelId: a.modelId },
    };
  }

  /**
   * The streamed answer. The first `next()` validates and stores the user's turn (its failures
   * are thrown, before any chunk); later failures come as one `error` item.
   */
  async *stream(caller: Principal, body: OpenAIChatRequestT, signal: AbortSignal): AsyncGenerator<CompatStreamItem> {
    const t = await this.translate(caller, body);
    const includeUsage = body.stream_options?.include_usage === true;
    const events = this.turns.run(caller, t.workspaceId, t.req, { stream: true, signal, store: t.store });
    const created = unixSeconds(new Date());
    let id = 'chatcmpl-pending';
    const chunk = (choices: OpenAIChatCompletionChunkT['choices'], extra: Partial<OpenAIChatCompletionChunkT> = {}): CompatStreamItem => ({
      chunk: {
        id,
        object: 'chat.completion.chunk',
        created,
        model: body.model,
        system_fingerprint: null,
        choices,
        ...(includeUsage ? { usage: null } : {}),
        ...extra,
      },
    });
    const delta = (content: string) => chunk([{ index: 0, delta: { content }, finish_reason: null, logprobs: null }]);
    let start: Extract<TurnEvent, { type: 'start' }> | null = null;
    let opened = false;
    const namedCalls = new Set<number>();
    // The first chunk (role, atrium, sources) waits for the event after `start`, which is `sources` when context was used.
    const open = (sources: StoredSource[]) => {
      opened = true;
      const s = start!;
      return chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null, logprobs: null }], {
        ...(sources.length > 0 ? { atrium_sources: sources } : {}),
        atrium: { threadId: t.store ? s.threadId : null, messageId: t.store ? s.messageId : null, modelId: s.modelId },
      });
    };
    for await (const ev of events) {
      if (ev.type === 'start') {
        start = ev;
        id = `chatcmpl-${ev.messageId}`;
        continue;
      }
      if (ev.type === 'sources') {
        yield open(ev.sources);
        continue;
      }
      // A refusal before any chunk is an ordinary error answer with its status (the route opens the
      // stream only after the first item), so clients see a 400 context_length_exceeded as such.
      if (ev.type === 'error' && !opened) throw errorOfEvent(ev);
      if (!opened) yield open([]);
      switch (ev.type) {
        case 'delta':
          if (ev.content) yield delta(ev.content);
          break;
        case 'tool_call': {
          const first = !namedCalls.has(ev.call.index);
          namedCalls.add(ev.call.index);
          yield chunk([{ index: 0, delta: { tool_calls: [toolCallDelta(ev.call, first)] }, finish_reason: null, logprobs: null }]);
          break;
        }
        case 'tool_run':
        case 'tool_result':
          break; // the workspace's tools, run by the turn: the client sees the answer they led to
        case 'image':
          // OpenAI's chat protocol has no image output: an image model's images are /v1/images/generations' (or the stored thread's).
          break;
        case 'done':
          yield chunk([{ index: 0, delta: {}, finish_reason: finishReason(ev.finishReason), logprobs: null }]);
          if (includeUsage) yield chunk([], { usage: usageOf(ev.usage) });
          return;
        case 'error':
          yield { error: { kind: ev.kind, code: ev.code, message: ev.detail } };
          return;
      }
    }
  }

  /**
   * POST /v1/images/generations: one ephemeral turn (nothing stored but its prompt log and ledger
   * row) on the named image model, answered with its images as base64.
   */
  async generateImages(caller: Principal, body: OpenAIImageRequestT, signal: AbortSignal): Promise<OpenAIImagesResponseT> {
    const t = await this.translate(caller, { model: body.model, messages: [{ role: 'user', content: body.prompt }] });
    const a = await this.turns.complete(caller, t.workspaceId, t.req, signal, { store: false, imagesOnly: true });
    return {
      created: unixSeconds(new Date(a.created)),
      data: (a.generated ?? []).map((i) => ({ b64_json: i.data })),
      usage: { input_tokens: a.usage.promptTokens, output_tokens: a.usage.completionTokens, total_tokens: a.usage.totalTokens },
    };
  }

  /** The OpenAI request as the turn's request; the model names a workspace (and model) the caller may use. */
  private async translate(caller: Principal, body: OpenAIChatRequestT): Promise<{ workspaceId: string; req: TurnRequest; store: boolean }> {
    const m = MODEL_ID.exec(body.model);
    if (!m) throw modelNotFound(body.model);
    const [, workspaceId, modelId] = m as unknown as [string, string, string | undefined];
    const w = await this.workspaces.load(caller, workspaceId.toLowerCase()).catch((err: unknown) => {
      throw err instanceof AppError && err.kind === 'not_found' ? modelNotFound(body.model) : err;
    });
    if (modelId && !w.models.some((x) => x.modelId === modelId.toLowerCase())) throw modelNotFound(body.model);
    refuseLegacyFunctions(body);
    const tools = toolOptions(body);
    const messages = body.messages.map(toTurnMessage);
    checkToolExchanges(messages);
    const a = body.atrium ?? {};
    if (a.store === false && a.threadId) {
      throw badRequest('validation_failed', 'A turn that continues a thread is stored: drop atrium.store or atrium.threadId', [
        { path: 'body/atrium/store', message: 'cannot be false with atrium.threadId' },
      ]);
    }
    const stop = typeof body.stop === 'string' ? [body.stop] : body.stop;
    const maxTokens = body.max_completion_tokens ?? body.max_tokens;
    // Absent and null both mean "the workspace's setting" (OpenAI's clients send null for unset).
    const req: TurnRequest = {
      messages,
      ...(tools ? { tools } : {}),
      ...(modelId ? { modelId: modelId.toLowerCase() } : {}),
      ...(a.threadId ? { threadId: a.threadId } : {}),
      ...(a.plusIds ? { plusIds: a.plusIds } : {}),
      ...(body.temperature != null ? { temperature: body.temperature } : {}),
      ...(body.top_p != null ? { topP: body.top_p } : {}),
      ...(maxTokens != null ? { maxTokens } : {}),
      ...(body.n != null ? { n: body.n } : {}),
      ...(body.presence_penalty != null ? { presencePenalty: body.presence_penalty } : {}),
      ...(body.frequency_penalty != null ? { frequencyPenalty: body.frequency_penalty } : {}),
      ...(body.logit_bias != null ? { logitBias: body.logit_bias } : {}),
      ...(stop && stop.length > 0 ? { stop } : {}),
    };
    return { workspaceId: w.row.id, req, store: a.store === true || a.threadId !== undefined };
  }
}
