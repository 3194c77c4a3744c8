import { randomUUID } from 'node:crypto';
import { Type } from 'typebox';
import { describe, expect, it } from 'vitest';
import { Workspace } from '../src/modules/workspaces/schema.js';
import { expectShape } from './helpers/shape.js';

const workspace = () => ({
  id: randomUUID(),
  name: 'w',
  chatHistoryType: 'TEAM',
  contextType: 'SHARED',
  sharingType: 'TEAM',
  greeting: null,
  samplePrompts: [],
  models: [],
  plusIds: [],
  mcpServerIds: [],
  allowedTools: null,
  followUpSearch: 'carry',
  userId: 1,
  created: new Date().toISOString(),
  updated: new Date().toISOString(),
});

describe('expectShape', () => {
  it('passes a body of the schema, following references to shared schemas', () => {
    const w = workspace();
    expect(expectShape(Workspace, w)).toBe(w);
    expect(() => expectShape(Type.Array(Type.Ref('Workspace')), [w, w])).not.toThrow();
  });

  it('fails naming every mismatch by its path', () => {
    const bad = { ...workspace(), id: 'not-a-uuid', sharingType: 'EVERYONE', models: [{ modelId: 'x' }] } as Record<string, unknown>;
    delete bad.created;
    let message = '';
    try {
      expectShape(Workspace, bad);
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain('response does not match Workspace');
    expect(message).toContain('/id: must match format "uuid"');
    expect(message).toContain('/sharingType');
    expect(message).toContain('/models/0');
    expect(message).toMatch(/created/);
  });
});
