import { defineConfig } from 'vitest/config';

// ATRIUM_TEST_DATABASE_URL=postgres://… runs the same suite on PostgreSQL; unset, each test file
// gets its own in-memory PGlite.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    testTimeout: 20_000,
    hookTimeout: 60_000,
    reporters: ['default'],
  },
});
