import { defineConfig } from 'vitest/config';

// The bench's own tests (pure logic, and the baseline servers over real sockets): no timed
// assertions, so they could join `make test`; `npx vitest run --config bench/vitest.config.ts`.
export default defineConfig({
  resolve: { conditions: ['herald-source'] },
  ssr: { resolve: { conditions: ['herald-source'] } },
  test: {
    root: '.',
    include: ['bench/src/**/*.test.ts', 'bench/test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
