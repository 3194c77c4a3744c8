/**
 * A refusal as people read it: one message, in the app's words. The server's problem documents
 * are written for API users (field paths such as `body/currentPassword`, the API's own names such
 * as "Plus entry", resource ids); this turns them into what the screens say. Pure, so it is tested
 * in node (test/web/problem-words.test.ts).
 */
import { t } from '../i18n/index.js';

/** What of a problem document (api/client.ts's Problem) the words are made from. */
export interface Problem {
  title?: string;
  status: number;
  code: string;
  detail?: string;
  errors?: Array<{ path: string; message: string }>;
}

/** Field names of a screen's form → the labels people see there (`{ newPassword: 'New password' }`). */
export type FieldLabels = Record<string, string>;

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
/** One id or a list of them, with the colon or quotes around them: `: 3f2a…, 9b1c…`, `(3f2a…)`. */
const IDS = new RegExp(`\\s*:?\\s*[("'“]?${UUID}[)"'”]?(?:\\s*,\\s*[("'“]?${UUID}[)"'”]?)*`, 'gi');
/** An API field name inside a sentence (`requestsPerMinute`), or a quoted name left as it is (`"myNotes.md"`). */
const CAMEL = /"[^"]*"|\b[a-z]+(?:[A-Z][a-z]*)+\b/g;

/** The API's names as the app calls them, without raw ids. */
export function appWords(text: string): string {
  return tidy(
    text
      .replace(IDS, '')
      .replace(/\bPlus entries\b/g, 'document sets')
      .replace(/\bPlus entry\b/g, 'document set')
      .replace(/\bPlus context\b/g, 'document context')
      .replace(/\bPlus\b/g, 'document set')
      .replace(CAMEL, (w) => (w.startsWith('"') ? w : words(w))),
  );
}

function tidy(text: string): string {
  const t = text
    .replace(/\s{2,}/g, ' ')
    .replace(/\s+([,.;:])/g, '$1')
    .replace(/[:,;]\s*$/, '')
    .trim();
  return t.charAt(0).toUpperCase() + t.slice(1);
}

/** `currentPassword` → `current password`. */
function words(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/[_-]+/g, ' ')
    .toLowerCase();
}

/** Field names whose plain words are not the app's. */
const KNOWN = (): FieldLabels => ({
  plusIds: t('problem.field.plusIds'),
  plusId: t('problem.field.plusId'),
  modelIds: t('problem.field.modelIds'),
  modelId: t('composer.model'),
  embeddingModelId: t('problem.field.embeddingModelId'),
  scopeId: t('problem.field.scopeId'),
});

const sentence = (text: string) => (/[.!?]$/.test(text) ? text : `${text}.`);

/** A field path of a problem (`body/models/0/temperature`) as the label people know. */
export function fieldLabel(path: string, labels: FieldLabels = {}): string {
  const parts = path.split('/').filter(Boolean);
  if (['body', 'query', 'querystring', 'params', 'headers'].includes(parts[0] ?? '')) parts.shift();
  const names = parts.filter((p) => !/^\d+$/.test(p));
  const last = names[names.length - 1];
  if (!last) return t('problem.theRequest');
  const item = /^\d+$/.test(parts[parts.length - 1] ?? '') ? ` ${t('problem.item', { n: Number(parts[parts.length - 1]) + 1 })}` : '';
  return `${labels[last] ?? KNOWN()[last] ?? appWords(words(last))}${item}`;
}

/** A schema checker's message in plain words (`must NOT have fewer than 8 characters`). */
function fieldMessage(message: string): string {
  const required = /^must have required property/.exec(message);
  if (required) return t('problem.required');
  return appWords(
    message
      .replace(/^must NOT have additional properties$/, t('problem.extraField'))
      .replace(/^must be equal to one of the allowed values$/, t('problem.notAChoice'))
      .replace(/^must match pattern .*$/, t('problem.form'))
      .replace(/^must match format "(\w+)"$/, (_, f: string) => t('problem.format', { format: f }))
      .replace(/^must be string$/, t('problem.text'))
      .replace(/^must be (integer|number)$/, t('problem.number'))
      .replace(/NOT/g, 'not'),
  ).replace(/^./, (c) => c.toLowerCase());
}

export interface ProblemWords {
  /** the one message */
  text: string;
  /** when several fields need a change: one line each */
  fields: string[];
}

/** Whether a problem's detail is a sentence for people (perhaps opening with a quoted name) rather than a field path and a rule. */
const readable = (p: Problem) => /^([A-Z]|"[^"]+" )/.test(p.detail ?? '') && !/\b(body|query|params)\//.test(p.detail ?? '');

/** The one message of a refusal (and the fields it names, when there are several). */
export function problemWords(p: Problem, labels: FieldLabels = {}): ProblemWords {
  const errors = p.errors ?? [];
  const line = (e: { path: string; message: string }) => sentence(`${fieldLabel(e.path, labels)} ${fieldMessage(e.message)}`);
  if (errors.length > 0 && !readable(p)) {
    return errors.length === 1 ? { text: line(errors[0]!), fields: [] } : { text: t('problem.someFields'), fields: errors.map(line) };
  }
  const text = sentence(appWords(p.detail || p.title || t('problem.wrong')));
  // A rate limit (ours or the provider's) passes within a minute or so; a budget says when it
  // resets and the sign-in throttle says "later", so they get nothing added: one message each.
  const passes = p.status === 429 && p.code !== 'budget_exceeded' && !/try again|versuchen sie es/i.test(text);
  return { text: passes ? `${text} ${t('problem.tryAgain')}` : text, fields: [] };
}
