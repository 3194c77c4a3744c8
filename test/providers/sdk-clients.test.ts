/** SDK clients: built once per connection and kept alive, rebuilt when a model's URL or key changes. */
import { describe, expect, it } from 'vitest';
import { getAdapter } from '../../src/providers/index.js';
import { useStandIn, type StandInKind } from '../support/use-standin.js';
import { makeRequest } from './_helpers.js';

const s = useStandIn();

const authOf = (kind: StandInKind, headers: Record<string, unknown>): unknown =>
  kind === 'GOOGLE' ? headers['x-goog-api-key'] : kind === 'AZURE' ? headers['api-key'] : headers.authorization;

describe.each<StandInKind>(['OPENAI', 'AZURE', 'ANTHROPIC', 'GOOGLE'])('%s', (kind) => {
  it('once warm, sequential calls open no new connection (keep-alive)', async () => {
    const target = s.target(kind);
    const adapter = getAdapter(target.apiBase, target.connectionType);
    for (let i = 0; i < 3; i++) await adapter.complete(makeRequest(target));
    const warm = s.standIn.connections;
    for (let i = 0; i < 20; i++) await adapter.complete(makeRequest(target));
    expect(s.standIn.requests).toHaveLength(23);
    expect(s.standIn.connections).toBe(warm);
  });

  it('a changed key is used at once (the client cache is keyed by URL and key fingerprint)', async () => {
    const adapter = getAdapter(s.target(kind).apiBase, s.target(kind).connectionType);
    await adapter.complete(makeRequest(s.target(kind, { apiKey: 'key-one' })));
    await adapter.complete(makeRequest(s.target(kind, { apiKey: 'key-two' })));
    await adapter.complete(makeRequest(s.target(kind, { apiKey: 'key-one' })));
    const sent = s.standIn.requests.map((r) => String(authOf(kind, r.headers)));
    expect(sent[0]).toContain('key-one');
    expect(sent[1]).toContain('key-two');
    expect(sent[2]).toContain('key-one');
  });
});
