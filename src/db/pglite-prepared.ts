import { protocol, type PGlite } from '@electric-sql/pglite';

/**
 * Named prepared statements on the in-process PGlite, for the statements every chat turn runs
 * (db/prepared.ts). PGlite's own `query` parses, describes, plans and runs a statement in six
 * protocol exchanges each time; here a statement text is parsed once (Parse + Describe under a
 * name) and each run is one exchange — Bind, Execute, Sync — reusing the parsed statement (and,
 * after five runs, PostgreSQL's generic plan). Runs take PGlite's query locks like `query` does,
 * and end with the same write-out to the file system before they resolve.
 *
 * Values go as text, typed by the statement's own casts; a run with a value that is not a string,
 * number, boolean or null answers null, and the caller uses `query`.
 */
export type PreparedRunner = (text: string, params: readonly unknown[]) => Promise<{ rows: Record<string, unknown>[] } | null>;

/** The parts of PGlite this needs (`_runExclusive*` are its own query locks, public but underscored). */
interface PGliteInternals {
  execProtocol(message: Uint8Array, opts?: { syncToFs?: boolean }): Promise<{ messages: Array<{ name: string }> }>;
  _runExclusiveQuery<T>(fn: () => Promise<T>): Promise<T>;
  _runExclusiveTransaction<T>(fn: () => Promise<T>): Promise<T>;
  parsers: Record<number, (x: string, typeId?: number) => unknown>;
}

interface Prepared {
  name: string;
  fields: Array<{ name: string; parse: ((x: string) => unknown) | null }>;
}

/** At most this many statements are kept prepared (the turn's common shapes are a handful). */
const MAX_PREPARED = 128;

const concat = (parts: Uint8Array[]): Uint8Array => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
};

export function preparedRunner(pglite: PGlite): PreparedRunner {
  const pg = pglite as unknown as PGliteInternals;
  const statements = new Map<string, Prepared>();

  async function prepare(text: string): Promise<Prepared> {
    const name = `atrium_p${statements.size}`;
    const { messages } = await pg.execProtocol(
      concat([protocol.serialize.parse({ name, text }), protocol.serialize.describe({ type: 'S', name }), protocol.serialize.sync()]),
      { syncToFs: false },
    );
    const desc = messages.find((m) => m.name === 'rowDescription') as { fields: Array<{ name: string; dataTypeID: number }> } | undefined;
    const fields = (desc?.fields ?? []).map((f) => {
      const parser = pg.parsers[f.dataTypeID];
      return { name: f.name, parse: parser ? (x: string) => parser(x, f.dataTypeID) : null };
    });
    const p = { name, fields };
    statements.set(text, p);
    return p;
  }

  return async (text, params) => {
    const values: Array<string | null> = [];
    for (const v of params) {
      if (v === null || v === undefined) values.push(null);
      else if (typeof v === 'string') values.push(v);
      else if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') values.push(String(v));
      else return null;
    }
    if (!statements.has(text) && statements.size >= MAX_PREPARED) return null;
    return pg._runExclusiveTransaction(() =>
      pg._runExclusiveQuery(async () => {
        const p = statements.get(text) ?? (await prepare(text));
        // A failed run throws its DatabaseError (after Sync: the session is ready for the next one).
        const { messages } = await pg.execProtocol(
          concat([protocol.serialize.bind({ statement: p.name, values }), protocol.serialize.execute({}), protocol.serialize.sync()]),
        );
        const rows: Record<string, unknown>[] = [];
        for (const m of messages) {
          if (m.name !== 'dataRow') continue;
          const cells = (m as unknown as { fields: Array<string | null> }).fields;
          const row: Record<string, unknown> = {};
          p.fields.forEach((f, i) => {
            const c = cells[i] ?? null;
            row[f.name] = c === null || !f.parse ? c : f.parse(c);
          });
          rows.push(row);
        }
        return { rows };
      }),
    );
  };
}
