/**
 * Browser tests (`npm run test:e2e`): Playwright drives Debian's Chromium (never a downloaded
 * browser) against the real server on PGlite and the stand-in provider (see fixtures.ts).
 */
import os from 'node:os';
import path from 'node:path';
import { defineConfig } from '@playwright/test';

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export default defineConfig({
  testDir: '.',
  testMatch: '*.spec.ts',
  // One server per worker; the machine is small, so one worker.
  workers: 1,
  fullyParallel: false,
  forbidOnly: !!process.env.CI,
  retries: 0,
  timeout: 90_000,
  expect: { timeout: 20_000 },
  outputDir: path.join(os.tmpdir(), 'atrium-e2e-results'),
  reporter: [['list']],
  use: {
    browserName: 'chromium',
    headless: true,
    viewport: { width: 1280, height: 800 },
    launchOptions: { executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: CHROMIUM_ARGS },
    screenshot: 'only-on-failure',
    trace: 'off',
    actionTimeout: 20_000,
    // The app's service worker answers navigations itself, out of Playwright's sight: blocked but
    // in the test of the installable app (installable.spec.ts), which allows it.
    serviceWorkers: 'block',
  },
});
