// The container image, the Compose file and the Helm chart, checked without a container engine
// (none runs on these machines): the Dockerfile by a Dockerfile parser and validator, the Compose
// file's environment by the server's own configuration parser, the chart's values by its schema and
// its templates' `.Values` references against the values file. What this cannot check (an image
// build, a cluster install) is said in docs/OPERATIONS.md.
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { Ajv } from 'ajv';
import { validate } from 'dockerfile-utils';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { ENV_KEYS, loadConfig } from '../../src/config.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

/** Dockerfile instructions as [keyword, arguments], continuation lines joined, comments dropped. */
function instructions(text: string): [string, string][] {
  return text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.trim().startsWith('#'))
    .map((line) => {
      const [keyword, ...rest] = line.trim().split(/\s+/);
      return [keyword!.toUpperCase(), rest.join(' ')];
    });
}

describe('Dockerfile', () => {
  const text = read('Dockerfile');
  const steps = instructions(text);
  const final = steps.slice(steps.findLastIndex(([k]) => k === 'FROM'));

  it('passes the Dockerfile validator with no problem', () => {
    expect(validate(text).map((d) => d.message)).toEqual([]);
  });

  it('builds in one stage and runs from another, as a user that is not root', () => {
    expect(steps.filter(([k]) => k === 'FROM').length).toBeGreaterThanOrEqual(2);
    const users = final.filter(([k]) => k === 'USER').map(([, v]) => v);
    expect(users.length).toBeGreaterThan(0);
    expect(users.at(-1)).not.toMatch(/^(root|0)(:|$)/);
  });

  it('keeps DATA_DIR on a volume, checks its health and starts the built server', () => {
    const dataDir = /DATA_DIR=(\S+)/.exec(final.filter(([k]) => k === 'ENV').join(' '))?.[1];
    expect(dataDir).toBeDefined();
    expect(final.find(([k]) => k === 'VOLUME')?.[1]).toContain(dataDir);
    expect(final.find(([k]) => k === 'HEALTHCHECK')?.[1]).toContain('/healthz');
    expect(final.find(([k]) => k === 'CMD')?.[1]).toContain('dist/main.js');
    // Only names the server reads are set for it.
    const envNames = [
      ...final
        .filter(([k]) => k === 'ENV')
        .join(' ')
        .matchAll(/([A-Z_]+)=/g),
    ].map((m) => m[1]);
    for (const name of envNames) if (name !== 'NODE_ENV') expect(ENV_KEYS).toContain(name);
  });

  it('leaves local builds, data and secrets out of the build context', () => {
    const ignored = read('.dockerignore').split('\n');
    for (const entry of ['node_modules', 'dist', 'data', '.env', '.git']) expect(ignored).toContain(entry);
  });
});

/** Compose's variable interpolation (`${X:-default}`, `${X:?message}`, `${X}`) from `env`. */
function interpolate(value: string, env: Record<string, string>): string {
  return value.replace(/\$\{([A-Z_]+)(?::([-?])([^}]*))?\}/g, (_m, name: string, op?: string, arg?: string) => {
    const set = env[name];
    if (set !== undefined && set !== '') return set;
    if (op === '?') throw new Error(`${name}: ${arg}`);
    return op === '-' ? (arg ?? '') : '';
  });
}

describe('Compose file', () => {
  const compose = parse(read('deploy/compose.yaml'), { merge: true }) as {
    services: Record<string, { environment?: Record<string, string>; depends_on?: object; build?: { context: string } }>;
  };
  const nodes = Object.entries(compose.services).filter(([name]) => name.startsWith('atrium'));

  it('runs several nodes on one PostgreSQL database, which is healthy before they start', () => {
    expect(nodes.length).toBeGreaterThanOrEqual(2);
    expect(compose.services.postgres).toBeDefined();
    for (const [, node] of nodes) {
      expect(node.depends_on).toEqual({ postgres: { condition: 'service_healthy' } });
      expect(path.resolve(ROOT, 'deploy', node.build!.context)).toBe(ROOT);
    }
  });

  it("gives every node an environment the server's configuration accepts, with one SECRET_KEY", () => {
    const env = { SECRET_KEY: 'k'.repeat(32) };
    for (const [, node] of nodes) {
      const vars = Object.fromEntries(Object.entries(node.environment!).map(([k, v]) => [k, interpolate(v, env)]));
      for (const name of Object.keys(vars)) expect(ENV_KEYS).toContain(name);
      const config = loadConfig(vars);
      expect(config.databaseUrl).toMatch(/^postgres:\/\/.+@postgres:5432\//);
      expect(config.secretKey).toBe(env.SECRET_KEY);
    }
  });

  it('refuses to start without a SECRET_KEY', () => {
    const [, node] = nodes[0]!;
    expect(() => interpolate(node.environment!.SECRET_KEY!, {})).toThrow(/SECRET_KEY/);
  });
});

describe('Helm chart', () => {
  const chart = 'deploy/helm/atrium';
  const values = parse(read(`${chart}/values.yaml`)) as Record<string, unknown>;
  const schema = JSON.parse(read(`${chart}/values.schema.json`)) as object;
  const templates = readdirSync(path.join(ROOT, chart, 'templates')).map((f) => read(`${chart}/templates/${f}`));

  it('has a chart description and values its schema accepts', () => {
    const meta = parse(read(`${chart}/Chart.yaml`)) as { apiVersion: string; name: string; version: string };
    expect(meta).toMatchObject({ apiVersion: 'v2', name: 'atrium' });
    expect(meta.version).toMatch(/^\d+\.\d+\.\d+$/);
    const check = new Ajv({ strict: false }).compile(schema);
    expect(check(values), JSON.stringify(check.errors)).toBe(true);
  });

  it('has a schema that refuses what would not run', () => {
    const check = new Ajv({ strict: false }).compile(schema);
    expect(check({ ...values, secretKey: 'short' })).toBe(false);
    expect(check({ ...values, databaseUrl: 'mysql://x' })).toBe(false);
    expect(check({ ...values, replicaCount: 0 })).toBe(false);
    expect(check({ ...values, replicas: 3 })).toBe(false);
  });

  it('refers in its templates only to values the values file has, including DATABASE_URL, SECRET_KEY and replicas', () => {
    const refs = new Set(templates.flatMap((t) => [...t.matchAll(/\.Values\.([A-Za-z0-9_.]+)/g)].map((m) => m[1]!)));
    for (const ref of refs) {
      const found = ref.split('.').reduce<unknown>((at, key) => (at as Record<string, unknown> | undefined)?.[key], values);
      expect(found, `.Values.${ref}`).not.toBeUndefined();
    }
    for (const ref of ['databaseUrl', 'secretKey', 'replicaCount']) expect(refs).toContain(ref);
    const text = templates.join('\n');
    for (const name of ['DATABASE_URL', 'SECRET_KEY']) expect(text).toContain(name);
    expect(text).toContain('runAsNonRoot: true');
    expect(text).toContain('path: /readyz');
  });
});
