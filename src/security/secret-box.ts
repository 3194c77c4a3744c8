import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';

const FINGERPRINT_LABEL = 'atrium secret-key fingerprint v1';

/** AES-256-GCM for secrets at rest (provider API keys). Stored form: `v1:` + base64(iv | tag | ciphertext). */
export class SecretBox {
  private constructor(private readonly key: Buffer) {}

  static fromSecret(secret: string): SecretBox {
    return new SecretBox(createHash('sha256').update(secret, 'utf8').digest());
  }

  /** The key file a data folder keeps when SECRET_KEY is not set; null when there is none. */
  static async fromKeyFile(file: string): Promise<SecretBox | null> {
    try {
      return SecretBox.fromSecret((await readFile(file, 'utf8')).trim());
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      return null;
    }
  }

  /**
   * Generate a key into `file` (mode 0600). `created` is false when another process created the
   * file first: then its key is used.
   */
  static async createKeyFile(file: string): Promise<{ box: SecretBox; created: boolean }> {
    await mkdir(path.dirname(file), { recursive: true });
    const generated = randomBytes(32).toString('base64url');
    try {
      await writeFile(file, generated + '\n', { flag: 'wx', mode: 0o600 });
      await chmod(file, 0o600);
      return { box: SecretBox.fromSecret(generated), created: true };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      return { box: SecretBox.fromSecret((await readFile(file, 'utf8')).trim()), created: false };
    }
  }

  /**
   * Identifies the key without revealing it: an HMAC of a fixed label under the derived key. A
   * guess of a weak SECRET_KEY could be checked against it — as against any sealed provider key
   * in the same database — so it exposes nothing the sealed keys do not.
   */
  fingerprint(): string {
    return 'v1:' + createHmac('sha256', this.key).update(FINGERPRINT_LABEL).digest('hex');
  }

  /** Whether this key opens a sealed value (GCM authenticates it, so a wrong key always fails). */
  canOpen(sealed: string): boolean {
    try {
      this.open(sealed);
      return true;
    } catch {
      return false;
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

/** Keys shorter than this show no characters at all in their mask. */
export const MIN_KEY_LENGTH_FOR_HINT = 12;

/**
 * What is kept in clear to recognise a key: its last four characters, only when that is at
 * most a third of it; '' otherwise (a short key such as a local server's "ollama" shows none).
 */
export function keyHint(key: string): string {
  return key.length >= MIN_KEY_LENGTH_FOR_HINT ? key.slice(-4) : '';
}

/** What a response shows of a secret: never the secret. */
export function maskSecret(hint: string | null): string | null {
  return hint === null ? null : `••••${hint}`;
}
