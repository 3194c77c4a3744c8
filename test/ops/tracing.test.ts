import http from 'node:http';
import type { AddressInfo } from 'node:net';
import protobuf from 'protobufjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTracing } from '../../src/observability/tracing.js';
import { expectStatus, multipartBody } from '../helpers/api.js';
import { newTeam, startTestApp, type TestApp } from '../helpers/app.js';
import { createModel, createWorkspace } from '../helpers/factories.js';
import { useStandIn } from '../support/use-standin.js';

/**
 * Traces: a real OTLP/HTTP receiver on loopback gets the spans the app exports (protobuf, OTLP's
 * default encoding, decoded here by protobufjs from the part of OTLP's trace schema the test
 * reads), a request's span with its route, the provider call as its descendant with the GenAI
 * attributes, and the database statements.
 */
const OTLP_TRACES = protobuf
  .parse(
    `
  syntax = "proto3";
  message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
  message ResourceSpans { repeated ScopeSpans scope_spans = 2; }
  message ScopeSpans { repeated Span spans = 2; }
  message Span {
    bytes trace_id = 1; bytes span_id = 2; bytes parent_span_id = 4; string name = 5; int32 kind = 6;
    repeated KeyValue attributes = 9;
  }
  message KeyValue { string key = 1; AnyValue value = 2; }
  message AnyValue { oneof value { string string_value = 1; bool bool_value = 2; int64 int_value = 3; double double_value = 4; } }
`,
  )
  .root.lookupType('ExportTraceServiceRequest');

/** A protobuf export request in the JSON encoding's shape (ids as hex, as OTLP/JSON writes them). */
function decodeProtobuf(body: Buffer): OtlpSpan[] {
  const message = OTLP_TRACES.toObject(OTLP_TRACES.decode(body), { longs: String, bytes: Buffer, oneofs: false }) as {
    resourceSpans?: Array<{ scopeSpans?: Array<{ spans?: Array<OtlpSpan & { traceId: Buffer; spanId: Buffer; parentSpanId?: Buffer }> }> }>;
  };
  return (message.resourceSpans ?? []).flatMap((rs) =>
    (rs.scopeSpans ?? []).flatMap((ss) =>
      (ss.spans ?? []).map((span) => ({
        ...span,
        traceId: span.traceId.toString('hex'),
        spanId: span.spanId.toString('hex'),
        parentSpanId: span.parentSpanId?.length ? span.parentSpanId.toString('hex') : undefined,
      })),
    ),
  );
}
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
const stand = useStandIn();
let t: TestApp;
let tracesUrl: string;

beforeAll(async () => {
  receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      contentTypes.add(String(req.headers['content-type']));
      if (req.url === '/v1/traces' && req.method === 'POST' && req.headers['content-type'] === 'application/x-protobuf') {
        received.push(...decodeProtobuf(Buffer.concat(chunks)));
      }
      // An empty ExportTraceServiceResponse.
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  tracesUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/v1/traces`;
  t = await startTestApp({ tracing: { tracesUrl, headers: {}, serviceName: 'atrium-test', protocol: 'http/protobuf' } });
});
afterAll(async () => {
  await t?.close();
  await new Promise((resolve) => receiver?.close(resolve));
});

const attr = (s: OtlpSpan, key: string): string | number | boolean | undefined => {
  const v = s.attributes?.find((a) => a.key === key)?.value;
  if (!v) return undefined;
  return v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : v.boolValue);
};

/** Flush the exporter until `found` holds for what the receiver has (the test's own timeout bounds the wait). */
async function until<T>(found: () => T | undefined): Promise<T> {
  const tracing = startTracing({ tracesUrl, headers: {}, serviceName: 'atrium-test', protocol: 'http/protobuf' });
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
    const model = await createModel(t, team.ownerKey, { url: stand.standIn.openaiBaseUrl, baseModel: 'stand-in-model' });
    const ws = await createWorkspace(t, team.ownerKey, { modelIds: [model.id] });
    const res = await t
      .api(team.ownerKey)
      .POST('/api/v1/chat/{workspaceId}/completions', { params: { path: { workspaceId: ws.id } }, body: { prompt: 'tell me a secret' } });
    expectStatus(res, 200);

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
    expect([...contentTypes]).toEqual(['application/x-protobuf']);
  });

  it('exports a span per ingested file, under its upload request, with its outcome', async () => {
    const team = await newTeam(t);
    const body = multipartBody([
      { name: 'title', value: 'traced' },
      { name: 'files', filename: 'notes.txt', contentType: 'text/plain', data: Buffer.from('Notes about the plan for the quarter.\n') },
    ]);
    expectStatus(await t.api(team.ownerKey).POST('/api/v1/plus', body), 200);
    const ingest = await until(() => received.find((s) => s.name === 'ingest file' && attr(s, 'atrium.ingest.outcome') === 'ok'));
    // The request's span ends after its answer: waited for like the other.
    const request = await until(() => received.find((s) => s.traceId === ingest.traceId && attr(s, 'http.route') === '/api/v1/plus'));
    expect(request.name).toBe('POST /api/v1/plus');
  });
});
