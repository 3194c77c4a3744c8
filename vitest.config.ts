import { defineConfig } from 'vitest/config';

// ATRIUM_TEST_DATABASE_URL=postgres://… runs the same suite on PostgreSQL; unset, each test file
// gets its own in-memory PGlite.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Outbound connections beyond loopback fail in every test file (test/setup/network.ts).
    setupFiles: ['test/setup/network.ts'],
    pool: 'forks',
    testTimeout: 20_000,
    hookTimeout: 60_000,
    reporters: ['default'],
  },
});
