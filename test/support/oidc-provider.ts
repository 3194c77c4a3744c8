/**
 * A real OpenID provider on loopback for sign-in tests: `oidc-provider` from npm behind a small
 * HTTP server of ours, with a login form (a username; no password: the form is not what is
 * tested), the person's groups in a `groups` claim, and switches that make it misbehave the way
 * a hostile or broken provider would: its token answer's ID token re-signed with another key, or
 * with claims changed (an expired token, another issuer). `rotateKeys()` starts a provider with
 * new signing keys at the same issuer.
 */
import { createPrivateKey, generateKeyPairSync, randomUUID, sign, type KeyObject } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import Provider from 'oidc-provider';

export interface IdpAccount {
  email?: string;
  emailVerified?: boolean;
  name?: string;
  groups: string[];
}

export interface TestIdp {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** username → the person; change freely between sign-ins */
  accounts: Map<string, IdpAccount>;
  /** rewrite the ID token of the next token answers (null: pass them as they are) */
  tamper: { claims?: (c: Record<string, unknown>) => Record<string, unknown>; otherKey?: boolean; kid?: string } | null;
  /** a provider with new signing keys (and a new key id) at the same issuer */
  rotateKeys(): void;
  /**
   * Act as a browser from an authorization URL: submit the login form as `username` and answer
   * the URL the provider finally sends the browser to (the client's redirect URI with code and state).
   */
  signIn(authorizationUrl: string, username: string): Promise<URL>;
  close(): Promise<void>;
}

interface SigningKey {
  kid: string;
  privateKey: KeyObject;
  jwk: Record<string, unknown>;
}

function newKey(): SigningKey {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const kid = randomUUID();
  return { kid, privateKey, jwk: { ...privateKey.export({ format: 'jwk' }), kid, alg: 'RS256', use: 'sig' } };
}

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

function resign(jwt: string, key: SigningKey, change: (c: Record<string, unknown>) => Record<string, unknown>): string {
  const [h, p] = jwt.split('.') as [string, string];
  const header = { ...JSON.parse(Buffer.from(h, 'base64url').toString()), kid: key.kid };
  const payload = change(JSON.parse(Buffer.from(p, 'base64url').toString()));
  const input = `${b64(header)}.${b64(payload)}`;
  return `${input}.${sign('sha256', Buffer.from(input), createPrivateKey(key.privateKey.export({ format: 'pem', type: 'pkcs8' }))).toString('base64url')}`;
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

async function formBody(req: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString());
}

/** `claimsInIdToken: false`: the ID token carries only `sub` (and the protocol's claims); email, name and groups come from userinfo. */
export async function startTestIdp(opts: { redirectUris: string[]; clientId?: string; clientSecret?: string; claimsInIdToken?: boolean }): Promise<TestIdp> {
  const clientId = opts.clientId ?? 'atrium-test';
  const clientSecret = opts.clientSecret ?? 'atrium-test-secret-0123456789';
  const accounts = new Map<string, IdpAccount>();
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as { port: number }).port}`;

  let key = newKey();
  const make = (k: SigningKey) =>
    new Provider(issuer, {
      clients: [
        {
          client_id: clientId,
          client_secret: clientSecret,
          redirect_uris: opts.redirectUris,
          grant_types: ['authorization_code'],
          response_types: ['code'],
        },
      ],
      jwks: { keys: [k.jwk] },
      cookies: { keys: ['test-idp-cookie-key'] },
      pkce: { required: () => true },
      ttl: { Interaction: 600, Session: 3600, Grant: 3600, AccessToken: 600, IdToken: 600, AuthorizationCode: 60 },
      conformIdTokenClaims: opts.claimsInIdToken === false,
      claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'groups'] },
      features: { devInteractions: { enabled: false } },
      interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
      findAccount: (_ctx: unknown, id: string) => {
        const a = accounts.get(id);
        if (!a) return undefined;
        return {
          accountId: id,
          claims: () => ({
            sub: id,
            ...(a.email === undefined ? {} : { email: a.email, email_verified: a.emailVerified ?? true }),
            name: a.name ?? id,
            groups: a.groups,
          }),
        };
      },
    });
  let provider = make(key);

  const idp: TestIdp = {
    issuer,
    clientId,
    clientSecret,
    accounts,
    tamper: null,
    rotateKeys() {
      key = newKey();
      provider = make(key);
    },
    async signIn(authorizationUrl, username) {
      const jar = new Map<string, string>();
      const remember = (res: Response) => {
        for (const c of res.headers.getSetCookie()) {
          const [pair] = c.split(';');
          const at = pair!.indexOf('=');
          jar.set(pair!.slice(0, at), pair!.slice(at + 1));
        }
      };
      const cookie = () => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
      let url = new URL(authorizationUrl);
      let init: RequestInit = {};
      for (let hop = 0; hop < 10; hop++) {
        const res = await fetch(url, { ...init, redirect: 'manual', headers: { ...(init.headers as Record<string, string>), cookie: cookie() } });
        remember(res);
        const location = res.headers.get('location');
        if (res.status >= 300 && res.status < 400 && location) {
          const next = new URL(location, url);
          if (next.origin !== issuer) return next;
          url = next;
          init = {};
          continue;
        }
        if (res.status === 200 && url.pathname.startsWith('/interaction/')) {
          await res.text();
          url = new URL(`${url.pathname}/login`, issuer);
          init = { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ username }).toString() };
          continue;
        }
        throw new Error(`the provider answered ${res.status} at ${url.pathname}: ${await res.text()}`);
      }
      throw new Error('too many redirects at the provider');
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };

  async function interaction(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const details = await provider.interactionDetails(req, res);
    if (req.method === 'GET') {
      res.setHeader('content-type', 'text/html; charset=utf-8');
      res.end(
        `<!doctype html><html><head><title>Test provider</title></head><body><h1>Test identity provider</h1>` +
          `<form method="post" action="/interaction/${escapeHtml(details.uid)}/login">` +
          `<label>Username <input name="username" autocomplete="username"></label>` +
          `<button type="submit">Continue</button></form></body></html>`,
      );
      return;
    }
    const username = (await formBody(req)).get('username') ?? '';
    if (!accounts.has(username)) {
      res.statusCode = 400;
      res.end('unknown user');
      return;
    }
    const grant = new provider.Grant({ accountId: username, clientId: details.params.client_id });
    grant.addOIDCScope(details.params.scope ?? 'openid');
    const grantId = await grant.save();
    await provider.interactionFinished(req, res, { login: { accountId: username }, consent: { grantId } }, { mergeWithLastSubmission: false });
  }

  /** The token answer with its ID token rewritten as `idp.tamper` says (the provider writes it with one `end`). */
  function tamperTokenAnswer(res: ServerResponse): void {
    const end = res.end.bind(res) as (chunk?: unknown) => ServerResponse;
    res.end = ((chunk?: unknown) => {
      const t = idp.tamper;
      if (!t || chunk === undefined || res.statusCode !== 200) return end(chunk);
      const body = JSON.parse(Buffer.from(chunk as string).toString()) as Record<string, unknown>;
      body.id_token = resign(body.id_token as string, t.otherKey ? { ...newKey(), kid: t.kid ?? key.kid } : key, t.claims ?? ((c) => c));
      const text = JSON.stringify(body);
      res.setHeader('content-length', Buffer.byteLength(text));
      return end(text);
    }) as typeof res.end;
  }

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0]!;
    if (path.startsWith('/interaction/')) {
      interaction(req, res).catch((err: unknown) => {
        res.statusCode = 500;
        res.end(String(err));
      });
      return;
    }
    if (path === '/token') tamperTokenAnswer(res);
    provider.callback()(req, res);
  });
  return idp;
}
