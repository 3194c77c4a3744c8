/** recordAudit's last line of defence: a detail whose name could carry a secret or prompt text is refused, never stored. */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import { recordAudit, type AuditDetails } from '../../src/modules/audit/record.js';
import { startTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const count = async (action: string) =>
  (
    (await t.database.db.execute(sql`select count(*)::int as n from audit_log where details->>'probe' = ${action}`)) as unknown as {
      rows: Array<{ n: number }>;
    }
  ).rows[0]!.n;

/** this run's probes: a PostgreSQL database kept from an earlier run holds that run's rows */
const run = randomUUID();

describe('audit details', () => {
  it('refuses names such as password, token, apiKey, prompt, content, headers; stores ordinary ones', async () => {
    for (const name of [
      'password',
      'newPassword',
      'token',
      'inviteToken',
      'apiKey',
      'providerKey',
      'secret',
      'prompt',
      'content',
      'headers',
      'Authorization',
      'cookie',
    ]) {
      const details = { probe: `refused-${name}-${run}`, [name]: 'x' } as AuditDetails;
      await expect(recordAudit(t.database.db, { action: 'user.update', actor: null, teamId: null, details })).rejects.toThrow(/never recorded/);
      expect(await count(`refused-${name}-${run}`)).toBe(0);
    }
    await recordAudit(t.database.db, {
      action: 'user.update',
      actor: null,
      teamId: null,
      details: { probe: `kept-${run}`, role: 'admin', apiKeyId: 'k', promptLogsDays: 3 },
    });
    expect(await count(`kept-${run}`)).toBe(1);
  });
});
