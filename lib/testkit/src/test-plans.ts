import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The catalogue the test stack runs with: the shipped plans' shape, with limits high enough that
 * a test only meets a cap it sets on purpose (through `StackOptions.plans`).
 */
export const TEST_PLANS = {
  plans: [
    { id: 'free', name: 'Free', paid: false, limits: limits(), price: { usd: 0, kes: 0 } },
    { id: 'hobby', name: 'Hobby', paid: true, limits: limits(), price: { usd: 9, kes: 1200 } },
    { id: 'startup', name: 'Startup', paid: true, limits: limits(), price: { usd: 49, kes: 6500 } },
  ],
  test_key_limits: limits(),
};

function limits() {
  return {
    connections: 10_000,
    dispatch_rate: 100_000,
    dispatch_burst: 100_000,
    queue_per_recipient: 10_000,
  };
}

/** Writes the plan catalogue a stack runs with (PLANS_FILE) into `dir`. */
export function writePlans(dir: string, plans: unknown = TEST_PLANS): string {
  const file = join(dir, 'plans.json');
  writeFileSync(file, JSON.stringify(plans));
  return file;
}
