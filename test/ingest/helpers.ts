import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const FIXTURES = fileURLToPath(new URL('../fixtures/', import.meta.url));

export function fixture(name: string): Uint8Array {
  return new Uint8Array(readFileSync(FIXTURES + name));
}

export function fixtureText(name: string): string {
  return readFileSync(FIXTURES + name, 'utf8');
}

export const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);

/** Collapse all whitespace runs to one space (for "contains this sentence" checks across line wraps). */
export const flat = (s: string): string => s.replace(/\s+/g, ' ');

/** Run `fn` and return the error it throws (fails the test if it does not throw). */
export async function caught(fn: () => unknown): Promise<unknown> {
  try {
    await fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected an error to be thrown');
}
