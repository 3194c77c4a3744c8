/** Shared set-up of the /v1 tests (test/api/v1*.test.ts): a team, a stand-in model, a workspace, clients. */
import OpenAI from 'openai';
import { expectStatus, multipartBody } from '../helpers/api.js';
import { newTeam, type TeamFixture, type TestApp } from '../helpers/app.js';
import { createModel, createWorkspace } from '../helpers/factories.js';
import type { StandInHandle } from '../support/use-standin.js';

export interface LogRow {
  id: string;
  userId: number;
  workspaceId: string | null;
  threadId: string | null;
  modelId: string | null;
  prompt: string;
  response: string | null;
  promptTokens: number | null;
  completionTokens: number | null;
  status: string;
  error: string | null;
}

export async function v1Setup(t: TestApp, s: StandInHandle, ws: Record<string, unknown> = {}, model: Record<string, unknown> = {}) {
  const team = await newTeam(t);
  const m = await createModel(t, team.ownerKey, { ...s.modelBody('OPENAI'), contextWindow: 8192, ...model });
  const w = await createWorkspace(t, team.ownerKey, { modelIds: [m.id], ...ws });
  return { team, model: m, ws: w };
}

export function sdk(baseUrl: string, key: string): OpenAI {
  return new OpenAI({ baseURL: `${baseUrl}/v1`, apiKey: key, maxRetries: 0 });
}

/** The caller's prompt logs through /api/v1, newest first. */
export async function logsOf(t: TestApp, key: string): Promise<LogRow[]> {
  const query = { startDate: '2000-01-01T00:00:00Z', endDate: '2100-01-01T00:00:00Z' };
  return expectStatus(await t.api(key).GET('/api/v1/chat/prompt-logs', { params: { query } }), 200);
}

export async function threadsOf(t: TestApp, key: string, workspaceId: string): Promise<Array<{ id: string; messageCount: number }>> {
  return expectStatus(await t.api(key).GET('/api/v1/chat/{workspaceId}/history', { params: { path: { workspaceId } } }), 200);
}

export async function createPlus(t: TestApp, key: string, fields: Record<string, string>, text: string): Promise<{ id: string }> {
  const body = multipartBody([
    ...Object.entries(fields).map(([name, value]) => ({ name, value })),
    { name: 'files', filename: 'notes.txt', contentType: 'text/plain', data: Buffer.from(text) },
  ]);
  return expectStatus(await t.api(key).POST('/api/v1/plus', body), 200);
}

export type { TeamFixture };
