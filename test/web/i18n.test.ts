/**
 * The web app's message catalogues (web/src/i18n): English and German hold the same keys, every
 * key is used in web/src and every `t('…')` there names a key; a text's `{name}` placeholders and
 * plural forms are the same in both; `t` fills them in and picks the plural (or ordinal) form by
 * Intl.PluralRules.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { de } from '../../web/src/i18n/de.js';
import { en } from '../../web/src/i18n/en.js';
import { setLanguage, t } from '../../web/src/i18n/index.js';
import { AUDIT_ACTIONS } from '../../src/modules/audit/record.js';

const SRC = path.resolve(import.meta.dirname, '../../web/src');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    if (statSync(file).isDirectory()) return name === 'i18n' ? [] : sources(file);
    return /\.tsx?$/.test(name) && !name.endsWith('.d.ts') ? [file] : [];
  });
}

/** Every key a source names: `t('key'` (keys are always literal, so that this finds them all). */
function usedKeys(): Map<string, string[]> {
  const used = new Map<string, string[]>();
  for (const file of sources(SRC)) {
    for (const m of readFileSync(file, 'utf8').matchAll(/\bt\(\s*'([^']+)'/g)) used.set(m[1]!, [...(used.get(m[1]!) ?? []), path.relative(SRC, file)]);
  }
  return used;
}

/** A text's placeholders; `{xLower}` counts as `{x}` (the same word in lower case, for a language that needs it mid-sentence). */
const placeholders = (text: unknown): string[] =>
  [
    ...new Set(
      Object.values(typeof text === 'string' ? { other: text } : (text as object)).flatMap((s: string) =>
        [...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!.replace(/Lower$/, '')),
      ),
    ),
  ].sort();

/** Keys the audit screen composes from a code the server sends (checked against the server's codes below). */
const DYNAMIC = ['audit.act.', 'audit.group.', 'audit.outcome.', 'audit.target.'];
const keysUnder = (prefix: string) =>
  Object.keys(en)
    .filter((k) => k.startsWith(prefix))
    .map((k) => k.slice(prefix.length))
    .sort();

describe('message catalogues', () => {
  it('name every audit action, resource, outcome and target type the server records, and nothing else', () => {
    expect(keysUnder('audit.act.')).toEqual([...AUDIT_ACTIONS].sort());
    expect(keysUnder('audit.group.')).toEqual([...new Set(AUDIT_ACTIONS.map((a) => a.split('.')[0]!))].sort());
    expect(keysUnder('audit.outcome.')).toEqual(['failure', 'success']);
    // every target type a service records (`target: { type: '…'`)
    const recorded = new Set<string>();
    const walk = (dir: string): void => {
      for (const name of readdirSync(dir)) {
        const file = path.join(dir, name);
        if (statSync(file).isDirectory()) walk(file);
        else if (name.endsWith('.ts')) for (const m of readFileSync(file, 'utf8').matchAll(/target: \{ type: '(\w+)'/g)) recorded.add(m[1]!);
      }
    };
    walk(path.resolve(import.meta.dirname, '../../src/modules'));
    expect(recorded.size).toBeGreaterThan(5);
    expect(keysUnder('audit.target.')).toEqual([...recorded].sort());
  });

  it('hold the same keys in English and German', () => {
    expect(Object.keys(de).sort()).toEqual(Object.keys(en).sort());
  });

  it('name only keys that exist, and every key is used', () => {
    const used = usedKeys();
    const missing = [...used.entries()].filter(([k]) => !(k in en)).map(([k, files]) => `${k} (${files.join(', ')})`);
    expect(missing, 'named in web/src but in no catalogue').toEqual([]);
    const unused = Object.keys(en).filter((k) => !used.has(k) && !DYNAMIC.some((prefix) => k.startsWith(prefix)));
    expect(unused, 'in the catalogues but used nowhere').toEqual([]);
  });

  it('give each text the same placeholders, and the same plural form or none, in both languages', () => {
    const differ = (Object.keys(en) as Array<keyof typeof en>).filter(
      (k) => placeholders(en[k]).join() !== placeholders(de[k]).join() || typeof en[k] !== typeof de[k],
    );
    expect(differ).toEqual([]);
    // German texts are not left in English by mistake (a few words are the same in both)
    const same = (Object.keys(en) as Array<keyof typeof en>).filter((k) => typeof en[k] === 'string' && en[k] === de[k] && /\s/.test(en[k] as string));
    expect(same).toEqual([]);
  });
});

describe('t', () => {
  afterAll(() => setLanguage('en'));
  it('fills in parameters and picks the plural form by the language', async () => {
    await setLanguage('en');
    expect(t('signin.with', { name: 'Okta' })).toBe('Sign in with Okta');
    expect(t('search.count', { count: 1 })).toBe('1 chat matches.');
    expect(t('search.count', { count: 1234 })).toBe('1,234 chats match.');
    expect([2, 3, 11, 21, 112].map((n) => t('eval.foundAt', { ordinal: n }))).toEqual(['Found 2nd', 'Found 3rd', 'Found 11th', 'Found 21st', 'Found 112th']);
    await setLanguage('de');
    expect(t('signin.with', { name: 'Okta' })).toBe('Mit Okta anmelden');
    expect(t('search.count', { count: 1 })).toBe('1 passender Chat.');
    expect(t('search.count', { count: 1234 })).toBe('1.234 passende Chats.');
    expect(t('eval.foundAt', { ordinal: 2 })).toBe('An 2. Stelle gefunden');
  });
});
