import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // `npm run test:quick`: notes what its tier leaves out, and says so when the run ends.
    globalSetup: ['test/helpers/quick-summary.ts', 'test/helpers/templates.ts'],
    // Each worker's tasks take their ports from a range of its own (WARREN_PORT_RANGE).
    setupFiles: ['test/helpers/worker-ports.ts'],
    testTimeout: 60_000,
    // expect.poll waits on other processes (a server, a namespace's init, a browser): 1 s, the
    // default, is too little on a loaded 2-core CI machine.
    expect: { poll: { timeout: 15_000 } },
    hookTimeout: 60_000,
    // Tests spawn real git and real processes; two cores here, so keep the pool small.
    pool: 'forks',
    maxWorkers: 2,
    // Test files share their worker's modules (loading warren's ~150 modules once per file was a
    // third of the CPU): every test owns its temp dirs and WARREN_HOME, restores what it sets in
    // process.env, and warren's per-process caches are keyed by what their answers depend on.
    isolate: false,
  },
});
