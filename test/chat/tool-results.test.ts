/** What a tool's result becomes for the model: text from MCP content, the 16,000-token cut, the names tools are offered under. */
import { describe, expect, it } from 'vitest';
import { countTokens } from '../../src/ingest/tokens.js';
import { cutResult, MAX_TOOL_RESULT_TOKENS } from '../../src/modules/chat/tool-loop.js';
import { resultText } from '../../src/modules/mcp/client.js';
import { offeredName } from '../../src/modules/mcp/service.js';

describe('tool results for the model', () => {
  it('joins text parts, names other parts, and uses structured content only when there is no text', () => {
    expect(
      resultText({
        content: [
          { type: 'text', text: 'a' },
          { type: 'text', text: 'b' },
        ],
      }),
    ).toBe('a\nb');
    expect(resultText({ content: [{ type: 'image', mimeType: 'image/png' }] })).toBe('[image image/png]');
    expect(resultText({ content: [{ type: 'resource', resource: { uri: 'file:///x', text: 'inside' } }] })).toBe('inside');
    expect(resultText({ content: [{ type: 'resource_link', uri: 'file:///y' }] })).toBe('[resource file:///y]');
    expect(resultText({ content: [], structuredContent: { n: 1 } })).toBe('{"n":1}');
    expect(resultText({ content: [{ type: 'text', text: 'x' }], structuredContent: { n: 1 } })).toBe('x');
  });

  it('keeps a short result as it is and cuts a long one at the limit, saying so', () => {
    expect(cutResult('short')).toBe('short');
    const long = Array.from({ length: 30_000 }, (_, i) => `w${i}`).join(' ');
    const cut = cutResult(long);
    expect(cut.endsWith('\n[cut: the result was longer than 16,000 tokens]')).toBe(true);
    const kept = cut.slice(0, cut.indexOf('\n[cut:'));
    expect(long.startsWith(kept)).toBe(true);
    expect(countTokens(kept)).toBeLessThanOrEqual(MAX_TOOL_RESULT_TOKENS);
    expect(countTokens(kept)).toBeGreaterThan(MAX_TOOL_RESULT_TOKENS * 0.95);
    const exact = Array.from({ length: 2_000 }, (_, i) => `w${i}`).join(' ');
    expect(cutResult(exact)).toBe(exact);
  });

  it('cuts one huge run without breaks by pieces, without tokenising it whole', () => {
    const cut = cutResult('x'.repeat(2_000_000));
    expect(cut.endsWith('tokens]')).toBe(true);
    expect(cut.length).toBeLessThan(200_000);
  });

  it('offers a tool under a name every protocol accepts', () => {
    expect(offeredName('get-sum')).toBe('get-sum');
    expect(offeredName('files.read')).toBe('files_read');
    expect(offeredName('a'.repeat(80))).toHaveLength(64);
  });
});
