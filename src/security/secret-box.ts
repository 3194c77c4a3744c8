import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** AES-256-GCM for secrets at rest (provider API keys). Stored form: `v1:` + base64(iv | tag | ciphertext). */
export class SecretBox {
  private constructor(private readonly key: Buffer) {}

  static fromSecret(secret: string): SecretBox {
    return new SecretBox(createHash('sha256').update(secret, 'utf8').digest());
  }

  /** SECRET_KEY when configured; else a key generated once and kept in dataDir/secret.key. */
  static async load(secret: string | null, dataDir: string): Promise<SecretBox> {
    if (secret) return SecretBox.fromSecret(secret);
    const file = path.join(dataDir, 'secret.key');
    try {
      return SecretBox.fromSecret((await readFile(file, 'utf8')).trim());
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    await mkdir(dataDir, { recursive: true });
    const generated = randomBytes(32).toString('base64url');
    // 'wx': if another process created it first, use theirs.
    try {
      await writeFile(file, generated + '\n', { flag: 'wx', mode: 0o600 });
      await chmod(file, 0o600);
      return SecretBox.fromSecret(generated);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      return SecretBox.fromSecret((await readFile(file, 'utf8')).trim());
    }
  }

  seal(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return 'v1:' + Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
  }

  open(sealed: string): string {
    if (!sealed.startsWith('v1:')) throw new Error('unknown secret format');
    const raw = Buffer.from(sealed.slice(3), 'base64');
    const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  }
}

/** What a response shows of a secret: never the secret. */
export function maskSecret(last4: string | null): string | null {
  return last4 === null ? null : `••••${last4}`;
}
