/**
 * Text renderings of structured formats (CSV and JSON) that read well for a model and
 * chunk well: every emitted line or record carries its own context.
 */

// ---------------------------------------------------------------------------
// CSV
// ---------------------------------------------------------------------------

/** RFC 4180 parsing (quoted fields, doubled quotes, newlines inside quotes); lenient on errors. */
export function parseCsv(text: string, delimiter: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let i = 0;
  const n = text.length;
  const d = delimiter.charCodeAt(0);
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 34 /* " */ && field.length === 0) {
      // Quoted field.
      i++;
      let start = i;
      for (;;) {
        const q = text.indexOf('"', i);
        if (q === -1) {
          field += text.slice(start); // unterminated quote: take the rest
          i = n;
          break;
        }
        if (text.charCodeAt(q + 1) === 34) {
          field += text.slice(start, q + 1);
          i = q + 2;
          start = i;
          continue;
        }
        field += text.slice(start, q);
        i = q + 1;
        break;
      }
      // Anything between the closing quote and the delimiter is kept verbatim.
      continue;
    }
    if (c === d) {
      row.push(field);
      field = '';
      i++;
    } else if (c === 10 || c === 13) {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      i += c === 13 && text.charCodeAt(i + 1) === 10 ? 2 : 1;
    } else {
      // Plain run up to the next special character.
      let j = i + 1;
      while (j < n) {
        const cj = text.charCodeAt(j);
        if (cj === d || cj === 10 || cj === 13) break;
        j++;
      }
      field += text.slice(i, j);
      i = j;
    }
  }
  if (field.length > 0 || row.length > 0) {
    row.push(field);
    rows.push(row);
  }
  return rows.filter((r) => r.some((f) => f.trim().length > 0));
}

/** Most frequent of , ; tab | on the first line (outside quotes); ',' by default. */
export function sniffDelimiter(text: string): string {
  const nl = text.search(/\r|\n/);
  const line = (nl === -1 ? text : text.slice(0, nl)).replace(/"[^"]*"/g, '');
  let best = ',';
  let bestCount = 0;
  for (const d of [',', ';', '\t', '|']) {
    const count = line.split(d).length - 1;
    if (count > bestCount) {
      best = d;
      bestCount = count;
    }
  }
  return best;
}

const NUMERIC_CELL = /^[-+]?[\d\s.,%$€£¥]+$/;

function looksLikeHeader(rows: string[][]): boolean {
  const first = rows[0];
  if (!first || rows.length < 2 || first.length < 2) return false;
  const seen = new Set<string>();
  for (const cell of first) {
    const c = cell.trim();
    if (c.length === 0 || c.length > 100 || NUMERIC_CELL.test(c) || seen.has(c)) return false;
    seen.add(c);
  }
  return true;
}

const clean = (s: string): string => s.replace(/\s+/g, ' ').trim();

/**
 * CSV → one paragraph per row (rows separated by a blank line, so the chunker never
 * splits a row and packs whole rows). When the first row looks like a header (≥ 2
 * distinct, non-empty, non-numeric cells), each row is rendered header-aware as
 * `Header: value | Header: value` (empty cells omitted), so every chunk is
 * self-describing even far from the header line. Otherwise cells are joined with " | ".
 */
export function csvToText(text: string): string {
  const rows = parseCsv(text, sniffDelimiter(text));
  if (rows.length === 0) return '';
  if (!looksLikeHeader(rows)) {
    return rows.map((r) => r.map(clean).join(' | ')).join('\n\n');
  }
  const header = rows[0]!.map(clean);
  const out: string[] = [];
  for (let r = 1; r < rows.length; r++) {
    const row = rows[r]!;
    const cells: string[] = [];
    for (let c = 0; c < row.length; c++) {
      const v = clean(row[c]!);
      if (v.length === 0) continue;
      cells.push(`${header[c] ?? `column ${c + 1}`}: ${v}`);
    }
    if (cells.length > 0) out.push(cells.join(' | '));
  }
  return out.join('\n\n');
}

// ---------------------------------------------------------------------------
// JSON
// ---------------------------------------------------------------------------

const SIMPLE_KEY = /^[\p{L}\p{N}_$-]+$/u;

function childPath(parent: string, key: string | number): string {
  if (typeof key === 'number') return `${parent}[${key}]`;
  if (SIMPLE_KEY.test(key)) return parent ? `${parent}.${key}` : key;
  return `${parent}[${JSON.stringify(key)}]`;
}

function scalar(v: unknown): string {
  if (v === null) return 'null';
  if (typeof v === 'string') return v.length === 0 ? '""' : v;
  return String(v);
}

const MAX_RECORD_LINE = 400;

/** `k: v | k: v` for a small object whose values are all scalars (single-line strings). */
function flatRecord(entries: Array<[string, unknown]>): string | undefined {
  if (entries.length === 0 || entries.length > 30) return undefined;
  let out = '';
  for (const [k, v] of entries) {
    if (v !== null && typeof v === 'object') return undefined;
    const sv = scalar(v);
    if (sv.includes('\n')) return undefined;
    out += (out ? ' | ' : '') + `${k}: ${sv}`;
    if (out.length > MAX_RECORD_LINE) return undefined;
  }
  return out;
}

/**
 * JSON value → readable `path: value` lines (one per leaf, in document order), e.g.
 * `config.server.port: 8080`; a small object of scalars becomes one record line,
 * `4217[3]: alpha_3: AMD | name: Armenian Dram | numeric: 051`.
 * Each line carries its full key path, so a chunk cut in the middle of a large structure
 * stays meaningful, and it costs fewer tokens than pretty-printed JSON (no braces,
 * quotes or indentation). Elements of arrays that are containers, and top-level
 * container values, are separated by a blank line so the chunker keeps them together.
 * Iterative, so deeply nested input cannot overflow the stack.
 */
export function jsonToText(value: unknown): string {
  const lines: string[] = [];
  type Frame = { path: string; value: unknown } | null; // null = record separator
  const stack: Frame[] = [{ path: '', value }];
  const separate = (): void => {
    if (lines.length > 0 && lines[lines.length - 1] !== '') lines.push('');
  };
  const pushChild = (path: string, child: unknown, record: boolean): void => {
    // LIFO: the separator pushed first is popped after the record's own lines.
    if (record) stack.push(null);
    stack.push({ path, value: child });
    if (record) stack.push(null);
  };
  while (stack.length > 0) {
    const frame = stack.pop()!;
    if (frame === null) {
      separate();
      continue;
    }
    const { path, value: v } = frame;
    if (Array.isArray(v)) {
      if (v.length === 0) lines.push(`${path || '(root)'}: []`);
      for (let i = v.length - 1; i >= 0; i--) {
        const child: unknown = v[i];
        pushChild(childPath(path, i), child, child !== null && typeof child === 'object');
      }
    } else if (v !== null && typeof v === 'object') {
      const entries = Object.entries(v as Record<string, unknown>);
      const record = flatRecord(entries);
      if (record !== undefined) {
        lines.push(path ? `${path}: ${record}` : record);
        continue;
      }
      if (entries.length === 0) lines.push(`${path || '(root)'}: {}`);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [k, child] = entries[i]!;
        pushChild(childPath(path, k), child, path === '' && child !== null && typeof child === 'object');
      }
    } else {
      lines.push(path ? `${path}: ${scalar(v)}` : scalar(v));
    }
  }
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  return lines.join('\n');
}
