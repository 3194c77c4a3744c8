/**
 * Sign-in: what a session cookie costs per request next to an API key, and what a sign-in costs.
 * In process (`buildApp` on an in-memory PGlite, requests through `inject`), sequential, so the
 * figures are the server's own work without a network. A key is looked up once and then served
 * from the 2-second auth cache; a cookie is read from the database on every request (by design:
 * docs/DECISIONS.md, "Sign-in"). A sign-in is dominated by scrypt.
 */
import { randomUUID } from 'node:crypto';
import { buildApp } from '../src/app.js';
import { ADMIN_KEY, testConfig } from '../test/helpers/app.js';
import { renderSection, type Row, type Section } from './lib/report.js';
import { round, summarize, verdict } from './lib/stats.js';
import { now, since, stopwatch } from './lib/timer.js';

const REQUESTS = 400;
const LOGINS = 15;

export async function benchSignIn(): Promise<Section> {
  const sw = stopwatch();
  const { app } = await buildApp({ ...testConfig(), databaseUrl: 'memory://' }, { logger: false });
  try {
    const post = (url: string, payload: unknown, headers: Record<string, string> = {}) =>
      app.inject({ method: 'POST', url, payload: payload as object, headers });
    const team = (
      await post('/api/v1/teams', { name: 'bench', ownerName: 'O', ownerEmail: `o-${randomUUID()}@example.com` }, { authorization: `Bearer ${ADMIN_KEY}` })
    ).json();
    const email = `bench-${randomUUID()}@example.com`;
    const password = 'a bench password';
    const user = (await post('/api/v1/users', { name: 'B', email, password }, { authorization: `Bearer ${team.apiKey}` })).json();
    const loginMs: number[] = [];
    let cookie = '';
    for (let i = 0; i < LOGINS; i++) {
      const t0 = now();
      const res = await post('/api/v1/auth/login', { email, password }, {});
      loginMs.push(since(t0));
      if (res.statusCode !== 200) throw new Error(`login: ${res.statusCode} ${res.body}`);
      cookie = String(res.headers['set-cookie']).split(';')[0]!;
    }
    const measure = async (headers: Record<string, string>) => {
      const ms: number[] = [];
      for (let i = 0; i < REQUESTS; i++) {
        const t0 = now();
        const res = await app.inject({ method: 'GET', url: '/api/v1/me', headers });
        ms.push(since(t0));
        if (res.statusCode !== 200) throw new Error(`me: ${res.statusCode}`);
      }
      return summarize(ms.slice(REQUESTS / 10)); // the first tenth warms up
    };
    const byKey = await measure({ authorization: `Bearer ${user.apiKey}` });
    const byCookie = await measure({ cookie });
    const login = summarize(loginMs.slice(1));
    const row = (what: string, s: ReturnType<typeof summarize>): Row => ({
      request: what,
      n: s.n,
      'p50 ms': round(s.p50, 2),
      'p90 ms': round(s.p90, 2),
      'p99 ms': round(s.p99, 2),
    });
    const cookieTarget = 5;
    return {
      name: 'Sign-in',
      method:
        'In process: buildApp on an in-memory PGlite, requests through inject, one at a time. `GET /api/v1/me` with an API key (served from the auth cache after the first) and with the session cookie (one indexed query per request, never cached); `POST /api/v1/auth/login` (scrypt N=2^15, r=8, plus the throttle upserts and the session insert).',
      tables: [{ rows: [row('GET /me, API key', byKey), row('GET /me, session cookie', byCookie), row('POST /auth/login', login)] }],
      notes: [
        `A cookie costs ${round(byCookie.p50 - byKey.p50, 2)} ms more than a key at the median: the price of a session that a logout or a deletion on another node ends at once.`,
      ],
      targets: [
        {
          benchmark: 'Sign-in, cookie-authenticated request',
          target: `p50 ≤ ${cookieTarget} ms (in process)`,
          measured: `${round(byCookie.p50, 2)} ms`,
          result: verdict(byCookie.p50, '<=', cookieTarget).startsWith('pass') ? 'pass' : 'MISS',
        },
      ],
      seconds: sw.elapsedMs() / 1000,
    };
  } finally {
    await app.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.stdout.write(`${renderSection(await benchSignIn())}\n`);
}
