import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

// Workspace packages export their TypeScript sources under the `herald-source` condition, so
// tests run the code as written without a build step.
export default defineConfig({
  resolve: { conditions: ['herald-source'] },
  ssr: { resolve: { conditions: ['herald-source'] } },
  test: {
    include: [
      'proto/src/**/*.test.ts',
      'lib/*/src/**/*.test.ts',
      'lib/*/test/**/*.test.ts',
      'services/*/src/**/*.test.ts',
      'services/*/test/**/*.test.ts',
      'test/**/*.test.ts',
      'clients/*/test/**/*.test.ts',
      'clients/*/test/**/*.test.tsx',
      'bench/src/**/*.test.ts',
      'bench/test/**/*.test.ts',
      'scripts/**/*.test.ts',
    ],
    // The SDK's tests import its built dist/ (tested as shipped): build it first when stale.
    globalSetup: ['clients/sdk/test/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two files at once even on a 2-core box (vitest's default there is one): most of a file's
    // time is spent waiting on its own servers (nats-server, Postgres, Chromium), not computing.
    // Measured on the 2-core CI box: 254 files in 1,295 s with two workers (with other work
    // running beside it) against 1,870 s with one; every file passed.
    maxWorkers: Math.max(2, availableParallelism() - 1),
  },
});
