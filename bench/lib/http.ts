/**
 * A small HTTP/1.1 load client on node:http with a keep-alive agent (one agent per client, at most
 * `maxSockets` connections, reused across requests). node:http is used rather than fetch because
 * on a 2-core machine the load generator shares the CPU with the servers it measures, and
 * node:http costs a fraction of fetch's CPU per request; the same client is used for every target,
 * so references and Atrium pay the same client cost.
 */
import http from 'node:http';
import { now } from './timer.js';

export interface Target {
  hostname: string;
  port: number;
  path: string;
}

export function target(url: string): Target {
  const u = new URL(url);
  return { hostname: u.hostname, port: Number(u.port || 80), path: `${u.pathname}${u.search}` };
}

export interface HttpResult {
  status: number;
  /** the whole body (empty when `discardBody`) */
  body: string;
  /** request start → last body byte */
  ms: number;
  /** request start → the first moment the body received so far satisfied `mark` (null: never) */
  markMs: number | null;
}

export interface RequestOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Called on the body received so far until it returns true; the time of that moment is `markMs`. */
  mark?: (soFar: string) => boolean;
  /** Do not keep the body (throughput runs). */
  discardBody?: boolean;
  timeoutMs?: number;
}

export class HttpClient {
  readonly agent: http.Agent;

  constructor(maxSockets = 1) {
    this.agent = new http.Agent({ keepAlive: true, maxSockets, maxFreeSockets: maxSockets, scheduling: 'fifo' });
  }

  request(t: Target, opts: RequestOptions = {}): Promise<HttpResult> {
    return new Promise<HttpResult>((resolve, reject) => {
      const headers: Record<string, string | number> = { ...opts.headers };
      if (opts.body !== undefined) {
        headers['content-type'] ??= 'application/json';
        headers['content-length'] = Buffer.byteLength(opts.body);
      }
      const start = now();
      const req = http.request(
        { agent: this.agent, hostname: t.hostname, port: t.port, path: t.path, method: opts.method ?? (opts.body !== undefined ? 'POST' : 'GET'), headers },
        (res) => {
          res.setEncoding('utf8');
          let body = '';
          let markMs: number | null = null;
          const keep = !opts.discardBody || opts.mark !== undefined;
          res.on('data', (chunk: string) => {
            if (keep) body += chunk;
            if (opts.mark && markMs === null && opts.mark(body)) markMs = now() - start;
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: opts.discardBody ? '' : body, ms: now() - start, markMs }));
          res.on('error', reject);
        },
      );
      req.setTimeout(opts.timeoutMs ?? 30_000, () => req.destroy(new Error(`request timed out after ${opts.timeoutMs ?? 30_000} ms`)));
      req.on('error', reject);
      if (opts.body !== undefined) req.end(opts.body);
      else req.end();
    });
  }

  /** JSON convenience for set-up calls; throws on a status other than `expect`. */
  async json<T = Record<string, unknown>>(t: Target, body: unknown, opts: { method?: string; key?: string; expect?: number } = {}): Promise<T> {
    const r = await this.request(t, {
      method: opts.method ?? 'POST',
      body: JSON.stringify(body),
      headers: opts.key ? { authorization: `Bearer ${opts.key}` } : {},
    });
    if (r.status !== (opts.expect ?? 200)) throw new Error(`${opts.method ?? 'POST'} ${t.path}: ${r.status} ${r.body.slice(0, 500)}`);
    return JSON.parse(r.body) as T;
  }

  close(): void {
    this.agent.destroy();
  }
}
