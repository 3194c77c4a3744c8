/**
 * One span per database statement (tracing.ts installs this through hooks.ts). The clients are
 * wrapped in place: PGlite and its thread's client (`query`, and `transaction`'s own `query`),
 * and each node-postgres client a pool connects (`pool.query` runs on one of them, so it is not
 * wrapped twice). The statement's text is recorded only when it holds no string literal (the
 * application's statements pass values as parameters; a literal could be data).
 */
import { context, SpanKind, SpanStatusCode, type Tracer } from '@opentelemetry/api';
import type { StatementTracer } from './hooks.js';

type Query = (...args: unknown[]) => unknown;
const MAX_TEXT = 2000;

export function statementSpans(tracer: Tracer): StatementTracer {
  const wrap = (target: { query: Query }) => {
    const query = target.query;
    target.query = function tracedQuery(this: unknown, ...args: unknown[]) {
      const first = args[0];
      const text = typeof first === 'string' ? first : typeof (first as { text?: unknown })?.text === 'string' ? (first as { text: string }).text : '';
      const operation = /^\s*([a-z]+)/i.exec(text)?.[1]?.toUpperCase() ?? 'QUERY';
      const span = tracer.startSpan(
        operation,
        {
          kind: SpanKind.CLIENT,
          attributes: {
            'db.system.name': 'postgresql',
            'db.system': 'postgresql',
            'db.operation.name': operation,
            ...(text.includes("'") ? {} : { 'db.query.text': text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}…` : text }),
          },
        },
        context.active(),
      );
      const end = (err: unknown) => {
        if (err) span.setStatus({ code: SpanStatusCode.ERROR, message: (err as { code?: string }).code ?? 'error' });
        span.end();
      };
      // node-postgres' pool calls its client with a callback.
      const last = args[args.length - 1];
      if (typeof last === 'function') {
        args[args.length - 1] = (err: unknown, ...rest: unknown[]) => {
          end(err);
          return (last as (...a: unknown[]) => unknown)(err, ...rest);
        };
        return query.apply(this, args);
      }
      const out = query.apply(this, args);
      if (out && typeof (out as Promise<unknown>).then === 'function') {
        (out as Promise<unknown>).then(
          () => end(null),
          (err: unknown) => end(err),
        );
      } else end(null);
      return out;
    };
  };
  return (client, kind) => {
    if (kind === 'pg-pool') {
      (client as { on(event: 'connect', f: (c: { query: Query }) => void): void }).on('connect', wrap);
      return;
    }
    const c = client as { query: Query; transaction?: (fn: (tx: { query: Query }) => Promise<unknown>) => Promise<unknown> };
    wrap(c);
    const transaction = c.transaction;
    if (transaction) {
      c.transaction = function tracedTransaction(this: unknown, fn) {
        return transaction.call(this, (tx) => {
          wrap(tx);
          return fn(tx);
        });
      };
    }
  };
}
