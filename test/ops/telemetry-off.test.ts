import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

/** Telemetry that is not configured costs nothing: prom-client and OpenTelemetry are never loaded. */
const exec = promisify(execFile);
const ROOT = path.join(import.meta.dirname, '..', '..');

async function loadedWith(mode: 'on' | 'off'): Promise<number> {
  const dir = mkdtempSync(path.join(tmpdir(), 'atrium-probe-'));
  const { stdout } = await exec(process.execPath, ['--import', 'tsx', 'test/ops/telemetry-probe.ts', mode, dir], { cwd: ROOT });
  return (JSON.parse(stdout.trim().split('\n').at(-1)!) as { loaded: number }).loaded;
}

describe('telemetry off', () => {
  it('loads no prom-client or OpenTelemetry module; with METRICS_TOKEN and an OTLP endpoint it does', async () => {
    expect(await loadedWith('off')).toBe(0);
    expect(await loadedWith('on')).toBeGreaterThan(0);
  }, 120_000);
});
