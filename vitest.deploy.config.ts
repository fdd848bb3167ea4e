import { defineConfig } from 'vitest/config';

// `make test-deploy` and `make test-cluster` only (their scripts start the stack first): the
// docker compose stack, or the cluster (HERALD_STACK=cluster), as real containers. Not part of
// `make test`, whose files end in .test.ts.
const cluster = process.env.HERALD_STACK === 'cluster';

export default defineConfig({
  resolve: { conditions: ['herald-source'] },
  ssr: { resolve: { conditions: ['herald-source'] } },
  test: {
    include: [cluster ? 'test/cluster/**/*.cluster.ts' : 'test/deploy/**/*.deploy.ts'],
    // The cluster's fault test is one long run under load (about 10 minutes).
    testTimeout: cluster ? 1_200_000 : 300_000,
    hookTimeout: 300_000,
    pool: 'forks',
    fileParallelism: false,
  },
});
