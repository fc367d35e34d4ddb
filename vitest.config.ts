import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Generous: on a busy machine (other suites, `yes` on every core) a test may be several
    // times slower than alone; it may be slow, it must not fail for it.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    reporters: ['default', './test/support/summary-reporter.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'default',
          include: ['test/**/*.test.ts'],
        },
      },
      {
        // The session layer's suites again, on the Redis coordinator of cluster mode: every
        // bot there is one instance on a real redis-server (test/support/cluster-global-setup.ts).
        extends: true,
        test: {
          name: 'sessions-on-redis',
          include: ['test/sessions/*.test.ts'],
          exclude: [
            'test/sessions/chaos-restart.test.ts',
            'test/sessions/restart-process.test.ts',
            'test/sessions/recovery-legacy-index.test.ts',
          ],
          globalSetup: ['./test/support/cluster-global-setup.ts'],
        },
      },
    ],
  },
});
