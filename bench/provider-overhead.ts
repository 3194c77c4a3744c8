/**
 * What the provider SDK adds to one call, at concurrency 1: `openaiAdapter.complete` vs a raw
 * `fetch` of the same body to the same stand-in (both keep-alive). Not part of `npm run bench`:
 *   npx tsx bench/provider-overhead.ts
 */
import { getAdapter } from '../src/providers/index.js';
import type { ProviderRequest } from '../src/providers/types.js';
import { startStandInProvider } from '../test/support/standin-provider.js';
import { percentile } from './lib/stats.js';

const WARMUP = 300;
const ROUNDS = 2000;
const p50 = (samples: number[]) =>
  percentile(
    [...samples].sort((a, b) => a - b),
    50,
  ).toFixed(3);

const standIn = await startStandInProvider();
const req: ProviderRequest = {
  target: { apiBase: 'OPENAI', connectionType: 'URL', url: standIn.openaiBaseUrl, apiKey: 'sk-bench', baseModel: 'gpt-test' },
  messages: [{ role: 'user', content: 'hello there' }],
  params: { maxTokens: 64 },
  timeouts: { connectMs: 5000, totalMs: 10000, idleMs: 5000 },
};
const adapter = getAdapter('OPENAI', 'URL');
const body = JSON.stringify({ model: 'gpt-test', messages: req.messages, max_tokens: 64 });

async function measure(call: () => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < WARMUP + ROUNDS; i++) {
    const start = performance.now();
    await call();
    if (i >= WARMUP) out.push(performance.now() - start);
  }
  return out;
}

const raw = await measure(async () => {
  const res = await fetch(`${standIn.openaiBaseUrl}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-bench' },
    body,
  });
  await res.json();
});
const sdk = await measure(() => adapter.complete(req));
standIn.reset();
console.log(`p50 ms over ${ROUNDS} sequential calls: raw fetch ${p50(raw)}, adapter (openai SDK) ${p50(sdk)}`);
await standIn.close();
