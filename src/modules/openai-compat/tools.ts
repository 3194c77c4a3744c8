import { badRequest } from '../../errors.js';
import type { ChatMessage, ToolCall, ToolCallDelta, ToolOptions } from '../../providers/types.js';
import type { OpenAIChatRequestT, OpenAIToolCallT } from './schema.js';

/**
 * OpenAI's tools as the turn's (providers/types.ts): what the schema cannot check is checked
 * here, with the field named, before anything is stored or sent.
 */

/**
 * The older function-calling fields (`functions`, `function_call`) are not translated: a request
 * that offers them is refused, never answered as if they were absent. `tools` is their successor.
 */
export function refuseLegacyFunctions(body: OpenAIChatRequestT): void {
  const b = body as Record<string, unknown>;
  const offered = (k: string) => (Array.isArray(b[k]) ? (b[k] as unknown[]).length > 0 : b[k] != null && b[k] !== 'none');
  const field = ['functions', 'function_call'].find(offered);
  if (!field) return;
  throw badRequest('tools_unsupported', 'The older `functions` / `function_call` fields are not supported: offer them as `tools`', [
    { path: `body/${field}`, message: 'use tools and tool_choice' },
  ]);
}

/** `tools`, `tool_choice` and `parallel_tool_calls` as the turn's tool options (null: none offered). */
export function toolOptions(body: OpenAIChatRequestT): ToolOptions | null {
  const tools = body.tools ?? [];
  const choice = body.tool_choice ?? undefined;
  if (tools.length === 0) {
    if (choice !== undefined && choice !== 'none') {
      throw badRequest('validation_failed', 'tool_choice needs tools to choose from', [{ path: 'body/tool_choice', message: 'is only allowed with tools' }]);
    }
    return null;
  }
  const names = new Set<string>();
  tools.forEach((t, i) => {
    if (names.has(t.function.name)) {
      throw badRequest('validation_failed', `Two tools are named '${t.function.name}'`, [{ path: `body/tools/${i}/function/name`, message: 'must be unique' }]);
    }
    names.add(t.function.name);
  });
  if (typeof choice === 'object' && !names.has(choice.function.name)) {
    throw badRequest('validation_failed', `tool_choice names '${choice.function.name}', which is not one of tools`, [
      { path: 'body/tool_choice/function/name', message: 'must name one of tools' },
    ]);
  }
  return {
    definitions: tools.map((t) => ({
      name: t.function.name,
      ...(t.function.description !== undefined ? { description: t.function.description } : {}),
      ...(t.function.parameters !== undefined ? { parameters: t.function.parameters as Record<string, unknown> } : {}),
      ...(t.function.strict != null ? { strict: t.function.strict } : {}),
    })),
    ...(choice !== undefined ? { choice: typeof choice === 'string' ? choice : { name: choice.function.name } } : {}),
    ...(body.parallel_tool_calls != null ? { parallel: body.parallel_tool_calls } : {}),
  };
}

/** A call's arguments must be a JSON object (or empty, for none): Anthropic and Gemini take an object. */
export function checkedCall(c: OpenAIToolCallT, path: string): ToolCall {
  const args = c.function.arguments;
  if (args.trim()) {
    let v: unknown;
    try {
      v = JSON.parse(args);
    } catch {
      v = undefined;
    }
    if (!v || typeof v !== 'object' || Array.isArray(v)) {
      throw badRequest('validation_failed', 'A tool call’s arguments must be a JSON object', [
        { path: `${path}/function/arguments`, message: 'must be the JSON text of an object' },
      ]);
    }
  }
  return { id: c.id, name: c.function.name, arguments: args };
}

/**
 * Every tool result answers a call of the assistant message before it, and every call is
 * answered before the conversation goes on (the rule of all three protocols); call ids are unique.
 */
export function checkToolExchanges(messages: readonly ChatMessage[]): void {
  const seen = new Set<string>();
  let open: { index: number; ids: string[]; answered: Set<string> } | null = null;
  const close = () => {
    if (!open) return;
    const j = open.ids.findIndex((id) => !open!.answered.has(id));
    if (j >= 0) {
      throw badRequest('validation_failed', `The tool call '${open.ids[j]!.slice(0, 200)}' has no tool message with its result`, [
        { path: `body/messages/${open.index}/tool_calls/${j}/id`, message: 'needs a tool message with this tool_call_id after it' },
      ]);
    }
    open = null;
  };
  messages.forEach((m, i) => {
    if (m.role === 'tool') {
      const id = m.toolCallId ?? '';
      if (!open || !open.ids.includes(id) || open.answered.has(id)) {
        throw badRequest('validation_failed', `The tool message answers '${id.slice(0, 200)}', which is no open call of the assistant message before it`, [
          { path: `body/messages/${i}/tool_call_id`, message: 'must be the id of a call of the assistant message before it, answered once' },
        ]);
      }
      open.answered.add(id);
      return;
    }
    close();
    if (m.toolCalls && m.toolCalls.length > 0) {
      m.toolCalls.forEach((c, j) => {
        if (seen.has(c.id)) {
          throw badRequest('validation_failed', `Two tool calls have the id '${c.id.slice(0, 200)}'`, [
            { path: `body/messages/${i}/tool_calls/${j}/id`, message: 'must be unique in the conversation' },
          ]);
        }
        seen.add(c.id);
      });
      open = { index: i, ids: m.toolCalls.map((c) => c.id), answered: new Set() };
    }
  });
  close();
}

/** A streamed tool-call piece as OpenAI's delta: the first piece of a call names it. */
export function toolCallDelta(call: ToolCallDelta, first: boolean) {
  return first
    ? { index: call.index, id: call.id ?? '', type: 'function' as const, function: { name: call.name ?? '', arguments: call.arguments } }
    : { index: call.index, function: { arguments: call.arguments } };
}
