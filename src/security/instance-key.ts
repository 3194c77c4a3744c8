import { unlink } from 'node:fs/promises';
import path from 'node:path';
import { ConfigError } from '../config.js';
import type { Executor } from '../db/client.js';
import { keyHint, SecretBox } from './secret-box.js';
import { SecretsRepo } from './secrets-repo.js';

const FINGERPRINT = 'secret_key_fingerprint';
/** Set once the clear hints of keys saved before short keys lost theirs have been redone. */
const HINTS_REDONE = 'short_key_hints_hidden';

export interface InstanceSecrets {
  box: SecretBox;
  /** for the operator's log: provider keys this key cannot open (saved by a node with another key) */
  warnings: string[];
}

/**
 * The key that seals provider API keys, checked against the database before anything else
 * runs, so that nodes never disagree about it (a node with another key would answer 500 to every
 * completion). The database keeps a fingerprint of the key (SecretBox#fingerprint), written by
 * the first node that starts (insert-if-absent, then compare: two nodes starting together cannot
 * both win). The key comes from SECRET_KEY, else from DATA_DIR/secret.key; a key is generated
 * there only while the database holds no fingerprint and no sealed key, since otherwise the new
 * key could not be the cluster's. A database from before fingerprints gets one from the first
 * key that opens at least one of its sealed keys (or any key when it has none).
 */
export async function openInstanceSecrets(db: Executor, opts: { secretKey: string | null; dataDir: string }): Promise<InstanceSecrets> {
  const repo = new SecretsRepo();
  const file = path.join(opts.dataDir, 'secret.key');
  const stored = await repo.getSetting(db, FINGERPRINT);
  let box: SecretBox;
  let createdFile = false;
  if (opts.secretKey) {
    box = SecretBox.fromSecret(opts.secretKey);
  } else {
    const fromFile = await SecretBox.fromKeyFile(file);
    if (fromFile) {
      box = fromFile;
    } else {
      if (stored !== null || (await repo.hasSealedKeys(db))) {
        throw new ConfigError(
          `SECRET_KEY is not set and ${file} does not exist, but this database is already used with a key ` +
            '(it holds its fingerprint or provider keys sealed with it). Set SECRET_KEY to the key of the nodes ' +
            'that share this database (or restore that file); a newly generated key could not open them.',
        );
      }
      ({ box, created: createdFile } = await SecretBox.createKeyFile(file));
    }
  }
  const source = opts.secretKey ? 'SECRET_KEY' : `the key in ${file} (SECRET_KEY is not set)`;
  const mismatch = () =>
    new ConfigError(
      `SECRET_KEY mismatch: ${source} is not the key this database's provider keys are sealed with ` +
        '(its fingerprint differs from the one stored by the first node). Start every node with the same SECRET_KEY.',
    );

  const warnings: string[] = [];
  const mine = box.fingerprint();
  if (stored === null) {
    const sealed = await repo.sealedKeys(db);
    const unreadable = sealed.filter((k) => !box.canOpen(k.sealed)).length;
    if (sealed.length > 0 && unreadable === sealed.length) throw mismatch();
    const winner = await repo.putSettingIfAbsent(db, FINGERPRINT, mine);
    if (winner !== mine) {
      // Another node started at the same moment with another key and stored its fingerprint first.
      if (createdFile) await unlink(file).catch(() => undefined);
      throw mismatch();
    }
    if (unreadable > 0) {
      warnings.push(
        `${unreadable} of ${sealed.length} provider API keys cannot be opened with ${source}: they were saved by a node with ` +
          'another key. Their models fail until an admin enters their API keys again.',
      );
    }
  } else if (stored !== mine) {
    throw mismatch();
  }

  if ((await repo.getSetting(db, HINTS_REDONE)) === null) {
    for (const k of await repo.sealedKeys(db)) {
      if (!box.canOpen(k.sealed)) continue;
      const hint = keyHint(box.open(k.sealed));
      if (hint !== k.hint) await repo.setKeyHint(db, k, k.sealed, hint);
    }
    await repo.putSettingIfAbsent(db, HINTS_REDONE, new Date().toISOString());
  }
  return { box, warnings };
}
