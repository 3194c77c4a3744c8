import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTracing } from '../../src/observability/tracing.js';
import { newTeam, startTestApp, type TestApp } from '../helpers/app.js';
import { createModel, createWorkspace } from '../helpers/factories.js';
import { multipart } from '../helpers/multipart.js';
import { startStandInProvider, type StandInProvider } from '../support/standin-provider.js';

/**
 * Traces: a real OTLP/HTTP receiver on loopback gets the spans the app exports (JSON encoding),
 * a request's span with its route, the provider call as its descendant with the GenAI
 * attributes, and the database statements.
 */
interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: Array<{ key: string; value: OtlpValue }>;
}

let receiver: http.Server;
const received: OtlpSpan[] = [];
const contentTypes = new Set<string>();
let t: TestApp;
let standIn: StandInProvider;
let tracesUrl: string;

beforeAll(async () => {
  receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      contentTypes.add(String(req.headers['content-type']));
      if (req.url === '/v1/traces' && req.method === 'POST') {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          resourceSpans: Array<{ scopeSpans: Array<{ spans: OtlpSpan[] }> }>;
        };
        for (const rs of body.resourceSpans) for (const ss of rs.scopeSpans) received.push(...ss.spans);
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  tracesUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/v1/traces`;
  standIn = await startStandInProvider();
  t = await startTestApp({ tracing: { tracesUrl, headers: {}, serviceName: 'atrium-test' } });
});
afterAll(async () => {
  await t?.close();
  await standIn?.close();
  await new Promise((resolve) => receiver?.close(resolve));
});

const attr = (s: OtlpSpan, key: string): string | number | boolean | undefined => {
  const v = s.attributes?.find((a) => a.key === key)?.value;
  if (!v) return undefined;
  return v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : v.boolValue);
};

/** Flush the exporter until `found` holds for what the receiver has (the test's own timeout bounds the wait). */
async function until<T>(found: () => T | undefined): Promise<T> {
  const tracing = startTracing({ tracesUrl, headers: {}, serviceName: 'atrium-test' });
  for (;;) {
    await tracing.flush();
    const r = found();
    if (r !== undefined) return r;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe('OpenTelemetry traces over OTLP/HTTP', () => {
  it('exports the request span, a provider span under it with GenAI attributes, and statement spans', async () => {
    const team = await newTeam(t);
    const model = await createModel(t, team.ownerKey, { url: standIn.openaiBaseUrl, baseModel: 'stand-in-model' });
    const ws = await createWorkspace(t, team.ownerKey, { modelIds: [model.id] });
    const res = await t.request({ method: 'POST', url: `/api/v1/chat/${ws.id}/completions`, key: team.ownerKey, payload: { prompt: 'tell me a secret' } });
    expect(res.statusCode, res.body).toBe(200);

    const provider = await until(() => received.find((s) => attr(s, 'gen_ai.request.model') === 'stand-in-model'));
    expect(attr(provider, 'gen_ai.system')).toBe('openai');
    expect(attr(provider, 'gen_ai.operation.name')).toBe('chat');
    expect(attr(provider, 'gen_ai.usage.input_tokens')).toBeGreaterThan(0);
    expect(attr(provider, 'gen_ai.usage.output_tokens')).toBeGreaterThan(0);
    expect(provider.kind).toBe(3); // CLIENT

    // Its ancestor is the request's span, named by its route pattern.
    const route = '/api/v1/chat/:workspaceId/completions';
    const request = await until(() => received.find((s) => s.traceId === provider.traceId && attr(s, 'http.route') === route));
    expect(request.name).toBe(`POST ${route}`);
    expect(attr(request, 'url.path')).toBe(`/api/v1/chat/${ws.id}/completions`);
    const byId = new Map(received.filter((s) => s.traceId === provider.traceId).map((s) => [s.spanId, s]));
    let up: OtlpSpan | undefined = provider;
    while (up && up.spanId !== request.spanId) up = up.parentSpanId ? byId.get(up.parentSpanId) : undefined;
    expect(up).toBe(request);

    // The turn's statements are spans of the same trace; no span carries the prompt's text.
    const statements = received.filter((s) => s.traceId === provider.traceId && attr(s, 'db.system.name') === 'postgresql');
    expect(statements.length).toBeGreaterThan(0);
    expect(statements.map((s) => s.name)).toEqual(expect.arrayContaining([expect.stringMatching(/^(INSERT|WITH|SELECT|UPDATE)$/)]));
    for (const s of received) for (const a of s.attributes ?? []) expect(JSON.stringify(a.value)).not.toContain('tell me a secret');
    expect([...contentTypes]).toContain('application/json');
  });

  it('exports a span per ingested file, under its upload request, with its outcome', async () => {
    const team = await newTeam(t);
    const body = multipart([
      { name: 'title', value: 'traced' },
      { name: 'files', filename: 'notes.txt', contentType: 'text/plain', data: Buffer.from('Notes about the plan for the quarter.\n') },
    ]);
    expect((await t.request({ method: 'POST', url: '/api/v1/plus', key: team.ownerKey, ...body })).statusCode).toBe(200);
    const ingest = await until(() => received.find((s) => s.name === 'ingest file' && attr(s, 'atrium.ingest.outcome') === 'ok'));
    // The request's span ends after its answer: waited for like the other.
    const request = await until(() => received.find((s) => s.traceId === ingest.traceId && attr(s, 'http.route') === '/api/v1/plus'));
    expect(request.name).toBe('POST /api/v1/plus');
  });
});
