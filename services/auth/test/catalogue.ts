import { PlanCatalogue } from '@herald/proto';

/** A catalogue with distinct limits per plan, so a test can tell which limits a reply carries. */
export const TEST_CATALOGUE: PlanCatalogue = PlanCatalogue.parse({
  plans: [
    {
      id: 'free',
      name: 'Free',
      paid: false,
      limits: { connections: 3, dispatch_rate: 1, dispatch_burst: 5, queue_per_recipient: 10 },
      price: { usd: 0, kes: 0 },
    },
    {
      id: 'hobby',
      name: 'Hobby',
      paid: true,
      limits: { connections: 30, dispatch_rate: 10, dispatch_burst: 50, queue_per_recipient: 100 },
      price: { usd: 9, kes: 1200 },
    },
    {
      id: 'startup',
      name: 'Startup',
      paid: true,
      limits: {
        connections: 300,
        dispatch_rate: 100,
        dispatch_burst: 500,
        queue_per_recipient: 1000,
      },
      price: { usd: 49, kes: 6500 },
    },
  ],
  test_key_limits: {
    connections: 2,
    dispatch_rate: 0.5,
    dispatch_burst: 2,
    queue_per_recipient: 4,
  },
});

/** A paid period that has not ended for any test run. */
export const FAR_FUTURE = new Date('2099-01-01T00:00:00Z');
