import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TEST_PLANS } from '@herald/testkit';

/**
 * Plan limits out of the way of every figure: the shipped plans cap connections, dispatch rate
 * and queue depth per account (product policy), while the benchmarks measure what one edge and one
 * ingress can do. The catalogue keeps the harness's shape, which follows the auth service's schema.
 */
const BENCH_LIMITS = {
  connections: 1_000_000,
  dispatch_rate: 10_000_000,
  dispatch_burst: 10_000_000,
  queue_per_recipient: 100_000,
};

export function writeBenchPlans(dir: string): string {
  const file = join(dir, 'bench-plans.json');
  const catalogue = {
    ...TEST_PLANS,
    plans: TEST_PLANS.plans.map((p) => ({ ...p, limits: BENCH_LIMITS })),
    test_key_limits: BENCH_LIMITS,
  };
  writeFileSync(file, JSON.stringify(catalogue));
  return file;
}
