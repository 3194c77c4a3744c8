import { Readable } from 'node:stream';

/** Cells a spreadsheet would run as a formula get a leading quote (OWASP CSV injection). */
export function csvSafe(value: unknown): string {
  if (value === null || value === undefined) return '';
  const s = value instanceof Date ? value.toISOString() : String(value);
  return /^[=+\-@\t\r]/.test(s) ? `'${s}` : s;
}

/**
 * Rows as a CSV stream, every export's one format: a header of `columns`, CRLF line ends, cells
 * quoted only when they hold a quote, comma or line break, each cell through csvSafe.
 * csv-stringify is loaded on the first export, not while the server starts.
 */
export async function csvStream(columns: readonly string[], rows: Iterable<unknown[]> | AsyncIterable<unknown[]>): Promise<Readable> {
  const { stringify } = await import('csv-stringify');
  async function* safe() {
    for await (const row of rows) yield row.map(csvSafe);
  }
  return Readable.from(safe()).pipe(stringify({ header: true, columns: [...columns], quoted_match: /[",\r\n]/, record_delimiter: '\r\n' }));
}
