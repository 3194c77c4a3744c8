/**
 * The web app's words for refusals: no field paths, no API names, no raw ids, one message each
 * (web/src/lib/problem-words.ts), on problem documents shaped as the server writes them.
 */
import { describe, expect, it } from 'vitest';
import { appWords, fieldLabel, problemWords } from '../../web/src/lib/problem-words.js';

const ID = '3f2a9c4e-1b2d-4e5f-8a9b-0c1d2e3f4a5b';
const ID2 = '9b1c2d3e-4f5a-4b6c-8d7e-9f0a1b2c3d4e';
const problem = (p: { status?: number; code: string; detail: string; errors?: Array<{ path: string; message: string }> }) => ({
  type: 'about:blank',
  title: 'Bad Request',
  status: p.status ?? 400,
  ...p,
});

describe('problemWords', () => {
  it('says a wrong current password without its field path', () => {
    const w = problemWords(
      problem({ code: 'wrong_password', detail: 'The current password is wrong', errors: [{ path: 'body/currentPassword', message: 'is wrong' }] }),
    );
    expect(w).toEqual({ text: 'The current password is wrong.', fields: [] });
  });

  it('names a field by its label, or in plain words, never by its path', () => {
    const short = problem({
      code: 'password_too_short',
      detail: 'newPassword must have at least 8 characters',
      errors: [{ path: 'body/newPassword', message: 'must have at least 8 characters' }],
    });
    expect(problemWords(short).text).toBe('New password must have at least 8 characters.');
    expect(problemWords(short, { newPassword: 'New password again' }).text).toBe('New password again must have at least 8 characters.');
    const schema = problem({
      code: 'validation_failed',
      detail: 'body/name: must NOT have fewer than 1 characters',
      errors: [{ path: 'body/name', message: 'must NOT have fewer than 1 characters' }],
    });
    expect(problemWords(schema).text).toBe('Name must not have fewer than 1 characters.');
    const missing = problem({
      code: 'validation_failed',
      detail: "body/title: must have required property 'title'",
      errors: [{ path: 'body/title', message: "must have required property 'title'" }],
    });
    expect(problemWords(missing).text).toBe('Title is required.');
  });

  it('lists several fields under one message', () => {
    const w = problemWords(
      problem({
        code: 'validation_failed',
        detail: 'body/temperature: must be <= 2',
        errors: [
          { path: 'body/temperature', message: 'must be <= 2' },
          { path: 'body/topP', message: 'must be <= 1' },
        ],
      }),
      { topP: 'Top P' },
    );
    expect(w).toEqual({ text: 'Some fields need a change:', fields: ['Temperature must be <= 2.', 'Top P must be <= 1.'] });
  });

  it('says a refused file by its name once, as it was written', () => {
    const detail = '"myNotes.exe" is a binary file, not text. Supported types: PDF, Word (.docx), Markdown, plain text.';
    const w = problemWords(problem({ status: 415, code: 'unsupported_type', detail, errors: [{ path: 'files/myNotes.exe', message: detail }] }));
    expect(w).toEqual({ text: detail, fields: [] });
  });

  it('calls Plus entries document sets and drops ids, whether in the detail or a field', () => {
    const notFound = problemWords(problem({ status: 404, code: 'not_found', detail: 'Plus entry not found' }));
    expect(notFound.text).toBe('Document set not found.');
    const listed = problem({
      code: 'unknown_plus_entry',
      detail: `Plus entries not found: ${ID}, ${ID2}`,
      errors: [{ path: 'body/plusIds/1', message: 'is not a Plus entry you can see' }],
    });
    expect(problemWords(listed).text).toBe('Document sets not found.');
    expect(JSON.stringify(problemWords(listed))).not.toMatch(/[0-9a-f]{8}-/);
    expect(fieldLabel('body/plusIds/1')).toBe('Document sets (item 2)');
    expect(appWords(`Models not available to this team: ${ID}`)).toBe('Models not available to this team');
    expect(appWords('A budget needs credits, requestsPerMinute or both')).toBe('A budget needs credits, requests per minute or both');
  });

  it('gives a refusal one message: a budget says when it resets, a rate limit to try again in a moment', () => {
    const budget = problemWords(
      problem({
        status: 429,
        code: 'budget_exceeded',
        detail: 'The user budget of 5000 credits per month cannot cover this call; it resets at the start of the next period',
      }),
    ).text;
    expect(budget).toBe('The user budget of 5000 credits per month cannot cover this call; it resets at the start of the next period.');
    expect(budget).not.toContain('moment');
    const rate = problemWords(problem({ status: 429, code: 'rate_limited', detail: 'The user rate limit of 30 requests per minute is reached' })).text;
    expect(rate).toBe('The user rate limit of 30 requests per minute is reached. Try again in a moment.');
    const upstream = problemWords(problem({ status: 429, code: 'upstream_rate_limited', detail: 'The model provider is rate limiting requests (429)' })).text;
    expect(upstream).toBe('The model provider is rate limiting requests (429). Try again in a moment.');
    const throttle = problemWords(problem({ status: 429, code: 'too_many_attempts', detail: 'Too many failed sign-in attempts; try again later' })).text;
    expect(throttle).toBe('Too many failed sign-in attempts; try again later.');
  });
});
