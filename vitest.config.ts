import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Tests spawn real git and real processes; two cores here, so keep the pool small.
    pool: 'forks',
    maxWorkers: 2,
  },
});
