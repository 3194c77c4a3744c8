import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, configuredOrigin, loadConfig } from '../src/config.js';
import { loadSystemModels } from '../src/system-models.js';
import { newTeam, startTestApp, type TestApp } from './helpers/app.js';

describe('config', () => {
  it('has the documented defaults', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({ port: 8080, host: '127.0.0.1', databaseUrl: null, providerUrlPolicy: 'allow-private', adminApiKey: null });
    expect(c.dataDir).toBe(path.resolve('./data'));
    expect(Object.isFrozen(c)).toBe(true);
  });

  it('fails fast naming every bad variable', () => {
    let err: unknown;
    try {
      loadConfig({ PORT: 'eighty', DATABASE_URL: 'mysql://x', PROVIDER_URL_POLICY: 'anything', UPLOAD_MAX_FILES: '0' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const msg = (err as Error).message;
    for (const name of ['PORT', 'DATABASE_URL', 'PROVIDER_URL_POLICY', 'UPLOAD_MAX_FILES']) expect(msg).toContain(name);
  });

  it('parses numbers and the policy', () => {
    const c = loadConfig({ PORT: '9000', PROVIDER_URL_POLICY: 'public-only', UPLOAD_MAX_FILE_BYTES: '2048', DATABASE_URL: 'postgres://u@h/db' });
    expect(c).toMatchObject({ port: 9000, providerUrlPolicy: 'public-only', databaseUrl: 'postgres://u@h/db', upload: { maxFileBytes: 2048 } });
  });
});

describe('OpenID Connect configuration', () => {
  const oidc = {
    OIDC_ISSUER: 'https://idp.example.com/realms/acme',
    OIDC_CLIENT_ID: 'atrium',
    OIDC_CLIENT_SECRET: 'client-secret',
    OIDC_TEAM_MAP: '{"eng": {"team": "Engineering", "role": "member"}, "eng-leads": {"team": "Engineering", "role": "admin"}}',
  };
  const failure = (env: Record<string, string>): string => {
    try {
      loadConfig(env);
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      return (e as Error).message;
    }
    throw new Error('loadConfig accepted it');
  };

  it('is off by default, with password sign-in on', () => {
    const c = loadConfig({});
    expect(c.auth.oidc).toBeNull();
    expect(c.auth.passwordLogin).toBe(true);
    expect(loadConfig({ PASSWORD_LOGIN: 'off' }).auth.passwordLogin).toBe(false);
  });

  it('reads the provider, the defaults and the team map in its order', () => {
    expect(loadConfig(oidc).auth.oidc).toEqual({
      issuer: 'https://idp.example.com/realms/acme',
      clientId: 'atrium',
      clientSecret: 'client-secret',
      name: 'SSO',
      scopes: 'openid email profile',
      groupsClaim: 'groups',
      teamMap: [
        { group: 'eng', team: 'Engineering', role: 'member' },
        { group: 'eng-leads', team: 'Engineering', role: 'admin' },
      ],
    });
  });

  it('refuses at start-up, clearly, what would refuse people later', () => {
    expect(failure({ OIDC_ISSUER: oidc.OIDC_ISSUER })).toMatch(/OIDC_CLIENT_ID, OIDC_CLIENT_SECRET: must be set too/);
    expect(failure({ ...oidc, OIDC_TEAM_MAP: '' })).toMatch(/OIDC_TEAM_MAP: must be set/);
    expect(failure({ ...oidc, OIDC_TEAM_MAP: '{eng: 1}' })).toMatch(/OIDC_TEAM_MAP: is not JSON/);
    expect(failure({ ...oidc, OIDC_TEAM_MAP: '["eng"]' })).toMatch(/OIDC_TEAM_MAP: must be a JSON object/);
    const bad = failure({ ...oidc, OIDC_TEAM_MAP: '{"a": {"team": "A", "role": "boss"}, "b": {"role": "member"}, "c": "C"}' });
    expect(bad).toContain('"a".role must be "member", "admin" or "owner"');
    expect(bad).toContain('"b".team must be a team name');
    expect(bad).toContain('"c" must map to an object');
    expect(bad).toContain('expected {"<group>": {"team": "<team name>", "role": "member"|"admin"|"owner"}}');
    expect(failure({ ...oidc, OIDC_ISSUER: 'http://idp.example.com' })).toMatch(/OIDC_ISSUER: must be an https:\/\/ URL/);
    expect(loadConfig({ ...oidc, OIDC_ISSUER: 'http://127.0.0.1:9000' }).auth.oidc?.issuer).toBe('http://127.0.0.1:9000');
    expect(failure({ ...oidc, OIDC_SCOPES: 'email profile' })).toMatch(/OIDC_SCOPES: must include openid/);
    expect(failure({ OIDC_TEAM_MAP: oidc.OIDC_TEAM_MAP })).toMatch(/OIDC_TEAM_MAP: is set, but/);
  });
});

describe('trace export configuration', () => {
  it('is off without an endpoint, and speaks OTLP protobuf unless JSON is asked for', () => {
    expect(loadConfig({}).tracing).toBeNull();
    const on = loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' });
    expect(on.tracing).toMatchObject({ tracesUrl: 'http://collector:4318/v1/traces', protocol: 'http/protobuf' });
    const json = loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' });
    expect(json.tracing?.protocol).toBe('http/json');
    // The traces-specific variable wins over the general one, as OTLP's variables do.
    const both = {
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf',
    };
    expect(loadConfig(both).tracing?.protocol).toBe('http/protobuf');
    expect(loadConfig({ ...both, OTEL_SDK_DISABLED: 'true' }).tracing).toBeNull();
  });

  it('refuses the gRPC transport, naming the variable', () => {
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4317', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toThrow(/OTEL_EXPORTER_OTLP_PROTOCOL/);
  });
});

describe('system models from configuration', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('upserts the file’s models by id, and teams see them with includeSystem', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'atrium-sys-'));
    const file = path.join(dir, 'models.json');
    const id = '6f1d7a52-9d1e-4b35-9a3c-0d9f6a1b2c3d';
    writeFileSync(
      file,
      JSON.stringify([{ id, name: 'House GPT', apiBase: 'VENDOR_A', url: 'http://127.0.0.1:9/v1', baseModel: 'gpt-x', apiKey: 'sk-house-7777' }]),
    );
    expect(await loadSystemModels(t.services.models, file)).toBe(1);
    writeFileSync(file, JSON.stringify([{ id, name: 'House GPT v2', apiBase: 'OPENAI', baseModel: 'gpt-y' }]));
    await loadSystemModels(t.services.models, file);
    const team = await newTeam(t);
    const res = await t.request({ method: 'GET', url: `/api/v1/models/${id}`, key: team.ownerKey });
    expect(res.json()).toMatchObject({ id, name: 'House GPT v2', baseModel: 'gpt-y', system: true, apiKey: '••••7777' });

    writeFileSync(file, JSON.stringify([{ name: 'no id' }]));
    await expect(loadSystemModels(t.services.models, file)).rejects.toThrow(file);
  });
});

describe('sign-in and web app configuration', () => {
  it('has the defaults of docs/API.md and parses the proxy trust', () => {
    const c = loadConfig({});
    expect(c.auth).toMatchObject({ adminEmail: 'admin@localhost', adminPassword: null, sessionTtlSeconds: 14 * 86_400, publicUrl: null, trustProxy: false });
    expect(c.webDir).toBe(path.resolve(import.meta.dirname, '..', 'dist', 'web'));
    expect(configuredOrigin(c)).toBe('http://127.0.0.1:8080');
    expect(configuredOrigin(loadConfig({ HOST: '0.0.0.0', PORT: '9' }))).toBe('http://localhost:9');
    // `true` would believe a client's own X-Forwarded-For: refused at start-up, naming the variable.
    expect(() => loadConfig({ TRUST_PROXY: 'true' })).toThrow(/TRUST_PROXY/);
    expect(() => loadConfig({ TRUST_PROXY: ' TRUE ' })).toThrow(ConfigError);
    expect(loadConfig({ TRUST_PROXY: '2' }).auth.trustProxy).toBe(2);
    expect(loadConfig({ TRUST_PROXY: '10.0.0.1, 10.1.0.0/16' }).auth.trustProxy).toEqual(['10.0.0.1', '10.1.0.0/16']);
    const p = loadConfig({ PUBLIC_URL: 'https://atrium.example.com/', SESSION_TTL_SECONDS: '3600', WEB_DIR: '/srv/web' });
    expect(p.auth.publicUrl).toBe('https://atrium.example.com');
    expect(configuredOrigin(p)).toBe('https://atrium.example.com');
    expect(p.auth.sessionTtlSeconds).toBe(3600);
    expect(p.webDir).toBe('/srv/web');
  });

  it('refuses a short ADMIN_PASSWORD, a PUBLIC_URL with a path and a bad ADMIN_EMAIL, naming them', () => {
    expect(() => loadConfig({ ADMIN_PASSWORD: 'short' })).toThrow(/ADMIN_PASSWORD/);
    expect(() => loadConfig({ PUBLIC_URL: 'https://x.example/app' })).toThrow(/PUBLIC_URL/);
    expect(() => loadConfig({ ADMIN_EMAIL: 'nobody' })).toThrow(/ADMIN_EMAIL/);
    expect(() => loadConfig({ SESSION_TTL_SECONDS: '5' })).toThrow(ConfigError);
  });
});
