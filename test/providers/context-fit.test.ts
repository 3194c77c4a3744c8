/** The history-fitting rules (src/modules/chat/context-fit.ts, prompt.ts) and the one context-length retry. */
import { describe, expect, it } from 'vitest';
import {
  calibrationFrom,
  completeWithContextRetry,
  defaultMaxOutputTokens,
  effectiveMaxTokens,
  promptBudget,
  retryCalibration,
  streamWithContextRetry,
} from '../../src/modules/chat/context-fit.js';
import { assemblePrompt, refitAfterContextError, type AssemblyInput } from '../../src/modules/chat/prompt.js';
import { getAdapter, ProviderError, type ChatMessage } from '../../src/providers/index.js';
import { useStandIn } from '../support/use-standin.js';
import { collect, makeRequest } from './_helpers.js';

const s = useStandIn();

describe('output cap and budget', () => {
  it('defaults to min(4096, window / 4), 8192 when no window is declared', () => {
    expect(defaultMaxOutputTokens(null)).toBe(2048);
    expect(defaultMaxOutputTokens(4096)).toBe(1024);
    expect(defaultMaxOutputTokens(200_000)).toBe(4096);
    expect(defaultMaxOutputTokens(2)).toBe(1);
    expect(effectiveMaxTokens(300, 4096)).toBe(300);
    expect(effectiveMaxTokens(null, 4096)).toBe(1024);
  });

  it('keeps a safety margin of max(32, 5 %) besides the output reserve', () => {
    expect(promptBudget(4096, 1024)).toBe(4096 - 1024 - 205);
    expect(promptBudget(256, 64)).toBe(256 - 64 - 32);
    expect(promptBudget(100, 200)).toBe(1);
  });
});

describe('calibration', () => {
  const answer = (promptTokens: number, localPromptTokens?: number, modelId = 'm1') => ({
    role: 'assistant',
    modelId,
    usage: { promptTokens, completionTokens: 1, totalTokens: promptTokens + 1, ...(localPromptTokens ? { localPromptTokens } : {}) },
  });

  it('is the newest answer by this model with both counts, clamped to 1–4', () => {
    expect(calibrationFrom([], 'm1')).toBe(1);
    expect(calibrationFrom([{ role: 'user', modelId: null, usage: null }, answer(1300, 1000), answer(2000, 1000)], 'm1')).toBeCloseTo(1.3);
    expect(calibrationFrom([answer(5000, 1000, 'other'), answer(1300, 1000)], 'm1')).toBeCloseTo(1.3);
    expect(calibrationFrom([answer(900), answer(1500, 1000)], 'm1')).toBeCloseTo(1.5); // no local estimate: skipped
    expect(calibrationFrom([answer(500, 1000)], 'm1')).toBe(1);
    expect(calibrationFrom([answer(90_000, 1000)], 'm1')).toBe(4);
  });

  it('the retry is stricter: the reported prompt count + 10 %, at least 1.5× what failed', () => {
    expect(retryCalibration(1, 4000)).toBe(1.5);
    expect(retryCalibration(1, 4000, 5000)).toBe(1.5);
    expect(retryCalibration(1, 4000, 8000)).toBeCloseTo(2.2);
    expect(retryCalibration(1.2, 4000, 4400)).toBeCloseTo(1.8);
  });
});

describe('fitting history', () => {
  const history: ChatMessage[] = Array.from({ length: 120 }, (_, i) => ({
    role: i % 2 === 0 ? 'assistant' : 'user',
    content: `message ${i}: ${'lorem ipsum dolor sit amet '.repeat(10)}`,
  }));
  const input: AssemblyInput = {
    systemInstructions: 'Be brief.',
    addedContext: null,
    retrievedContext: null,
    historyNewestFirst: history,
    newTurns: [{ role: 'user', content: 'and now?' }],
    contextWindow: 4096,
    maxTokens: 1024,
    usesSystemPrompts: true,
    promptWrapper: null,
  };

  it('a calibration of 2 keeps about half the history, newest first, within the budget', () => {
    const plain = assemblePrompt(input);
    const doubled = assemblePrompt({ ...input, calibration: 2 });
    expect(plain.estimatedPromptTokens).toBeLessThanOrEqual(promptBudget(4096, 1024));
    expect(doubled.estimatedPromptTokens * 2).toBeLessThanOrEqual(promptBudget(4096, 1024));
    expect(plain.historyUsed).toBeLessThan(history.length);
    expect(doubled.historyUsed).toBeLessThan(plain.historyUsed);
    expect(Math.abs(doubled.historyUsed - plain.historyUsed / 2)).toBeLessThanOrEqual(2);
    expect(doubled.messages.at(-2)!.content).toBe(history[0]!.content);
  });

  it('a refit always has less history, uses a smaller reported window, and gives up without history', () => {
    const failed = assemblePrompt(input);
    const again = refitAfterContextError(input, failed, {});
    expect(again!.historyUsed).toBeLessThan(failed.historyUsed);
    const smaller = refitAfterContextError(input, failed, { contextLimit: 2048 });
    expect(smaller!.historyUsed).toBeLessThan(again!.historyUsed);
    const bare = assemblePrompt({ ...input, historyNewestFirst: [] });
    expect(refitAfterContextError(input, bare, {})).toBeNull();
  });
});

describe('the one retry after a context-length refusal (stand-in, real SDK)', () => {
  const long = (n: number): ChatMessage[] =>
    Array.from({ length: n }, (_, i) => ({ role: i % 2 === 0 ? 'user' : 'assistant', content: `turn ${i} ${'words '.repeat(60)}` }));

  it('complete: refit once with what the provider reported; the second answer is returned', async () => {
    s.standIn.set({ contextWindow: { tokens: 400, style: 'llamacpp' } });
    const seen: ProviderError[] = [];
    const res = await completeWithContextRetry(getAdapter('OPENAI'), makeRequest(s.target('OPENAI'), { messages: long(9) }), (pe) => {
      seen.push(pe);
      return long(1);
    });
    expect(res.finishReason).toBe('stop');
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ kind: 'upstream_context_length', upstreamCode: 'exceed_context_size_error', contextLimit: 400 });
    expect(seen[0]!.promptTokens).toBeGreaterThan(400);
    expect(s.standIn.requests).toHaveLength(2);
  });

  it('stream: the same, and a refusal of the retry stands', async () => {
    s.standIn.set({ contextWindow: { tokens: 400, style: 'openai' } });
    const ok = await collect(
      streamWithContextRetry(getAdapter('OPENAI'), makeRequest(s.target('OPENAI'), { messages: long(9), params: { maxTokens: 16 } }), () => long(1)),
    );
    expect(ok.error).toBeUndefined();
    expect(ok.done?.finishReason).toBe('length');
    const still = await collect(streamWithContextRetry(getAdapter('OPENAI'), makeRequest(s.target('OPENAI'), { messages: long(9) }), () => long(7)));
    expect(still.error).toMatchObject({ kind: 'upstream_context_length', upstreamCode: 'context_length_exceeded', contextLimit: 400 });
  });

  it('other failures are not retried', async () => {
    s.standIn.set({ failStatus: 500 });
    let refits = 0;
    const err = await completeWithContextRetry(getAdapter('ANTHROPIC'), makeRequest(s.target('ANTHROPIC')), () => {
      refits++;
      return long(1);
    }).catch((e: unknown) => e);
    expect(err).toMatchObject({ kind: 'upstream_error', upstreamStatus: 500 });
    expect(refits).toBe(0);
    expect(s.standIn.requests).toHaveLength(1);
  });
});
