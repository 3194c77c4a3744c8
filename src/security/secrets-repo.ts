import { and, eq, isNotNull, ne } from 'drizzle-orm';
import type { Executor } from '../db/client.js';
import { instanceSettings } from '../db/schema/instance.js';
import { models } from '../db/schema/models.js';

/** SQL about secrets at rest: instance settings (the key fingerprint) and models' sealed API keys. */
export class SecretsRepo {
  async getSetting(db: Executor, name: string): Promise<string | null> {
    const [row] = await db.select({ value: instanceSettings.value }).from(instanceSettings).where(eq(instanceSettings.name, name));
    return row?.value ?? null;
  }

  /** Store `value` unless the setting exists; answer what is stored now (ours or the first writer's). */
  async putSettingIfAbsent(db: Executor, name: string, value: string): Promise<string> {
    await db.insert(instanceSettings).values({ name, value }).onConflictDoNothing({ target: instanceSettings.name });
    const stored = await this.getSetting(db, name);
    if (stored === null) throw new Error(`instance setting ${name} vanished after insert`);
    return stored;
  }

  async hasSealedKeys(db: Executor): Promise<boolean> {
    const [row] = await db.select({ id: models.id }).from(models).where(isNotNull(models.apiKeyEnc)).limit(1);
    return row !== undefined;
  }

  /** Every sealed key, with its model's key (scope and id: model ids are unique per scope). */
  async sealedKeys(db: Executor): Promise<Array<{ scope: string; id: string; sealed: string; hint: string | null }>> {
    const rows = await db
      .select({ scope: models.scope, id: models.id, sealed: models.apiKeyEnc, hint: models.apiKeyLast4 })
      .from(models)
      .where(isNotNull(models.apiKeyEnc));
    return rows.map((r) => ({ scope: r.scope, id: r.id, sealed: r.sealed!, hint: r.hint }));
  }

  /** Replace a key's clear hint, unless the key changed meanwhile. */
  async setKeyHint(db: Executor, model: { scope: string; id: string }, sealed: string, hint: string): Promise<void> {
    await db
      .update(models)
      .set({ apiKeyLast4: hint })
      .where(and(eq(models.scope, model.scope), eq(models.id, model.id), eq(models.apiKeyEnc, sealed), ne(models.apiKeyLast4, hint)));
  }
}
