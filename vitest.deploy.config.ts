import { defineConfig } from 'vitest/config';

// `make test-deploy` only (scripts/test-deploy.sh starts the stack first): the docker compose
// stack as real containers. Not part of `make test`, whose files end in .test.ts.
export default defineConfig({
  resolve: { conditions: ['herald-source'] },
  ssr: { resolve: { conditions: ['herald-source'] } },
  test: {
    include: ['test/deploy/**/*.deploy.ts'],
    testTimeout: 300_000,
    hookTimeout: 300_000,
    pool: 'forks',
    fileParallelism: false,
  },
});
