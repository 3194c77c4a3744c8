/**
 * The app's words in the person's language (docs/DECISIONS.md, "The app's language"): `t(key,
 * params)` reads the catalogue of the language chosen — English (en.ts, the source of the keys)
 * or German (de.ts, loaded only when chosen). `{name}` in a text is replaced by `params.name`; a
 * text with plural forms picks one by `params.count` (Intl.PluralRules), or by the ordinal rules
 * when it is given `params.ordinal` instead ("2nd", "3rd"). Dates and numbers are
 * written with the same locale (`locale()`). Pure apart from `navigator`, so node tests use it too.
 */
import { en, type Catalogue, type Key, type Text } from './en.js';

export type { Key } from './en.js';
export type Language = 'en' | 'de';
export const LANGUAGES: readonly Language[] = ['en', 'de'];

// Also run in node (the catalogue and problem-word tests), where there is no DOM.
const dom = globalThis as { navigator?: { languages?: readonly string[]; language?: string }; document?: { documentElement: { lang: string } } };

let language: Language = 'en';
let catalogue: Catalogue = en;
let plurals = new Intl.PluralRules('en');
let ordinals = new Intl.PluralRules('en', { type: 'ordinal' });
const listeners = new Set<() => void>();

/** The first of the browser's languages the app speaks (English when none is). */
export function browserLanguage(): Language {
  const nav = dom.navigator;
  const wanted = nav ? (nav.languages ?? [nav.language]) : [];
  for (const tag of wanted) {
    const base = (tag ?? '').toLowerCase().split('-')[0] as Language;
    if (LANGUAGES.includes(base)) return base;
  }
  return 'en';
}

/** The language the app speaks now (also the BCP 47 locale for Intl). */
export function locale(): Language {
  return language;
}

/** Loads the language's catalogue (German on first use) and makes it the one spoken; `<html lang>` follows. */
export async function setLanguage(next: Language): Promise<void> {
  if (dom.document) dom.document.documentElement.lang = language;
  if (next === language) return;
  const words = next === 'de' ? (await import('./de.js')).de : en;
  language = next;
  catalogue = words;
  plurals = new Intl.PluralRules(next);
  ordinals = new Intl.PluralRules(next, { type: 'ordinal' });
  if (dom.document) dom.document.documentElement.lang = next;
  for (const l of listeners) l();
}

/** Called after every change of language. */
export function onLanguage(listener: () => void): () => void {
  listeners.add(listener);
  return () => void listeners.delete(listener);
}

export type Params = Record<string, string | number>;

function fill(text: string, params: Params): string {
  return text.replace(/\{(\w+)\}/g, (whole, name: string) => {
    const v = params[name];
    return v === undefined ? whole : typeof v === 'number' ? v.toLocaleString(language) : v;
  });
}

/** The text of `key` in the language spoken, with `params` filled in. */
export function t(key: Key, params: Params = {}): string {
  const text: Text = catalogue[key] ?? en[key];
  if (typeof text === 'string') return fill(text, params);
  const form = (params.ordinal !== undefined ? ordinals.select(Number(params.ordinal)) : plurals.select(Number(params.count ?? 0))) as keyof typeof text;
  return fill(text[form] ?? text.other, params);
}
