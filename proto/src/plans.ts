import { z } from 'zod';

/** What a plan allows. Every limit is per account or per key, as each field says. */
export const PlanLimits = z.object({
  /** Concurrent sockets per account, across every socket-edge instance. */
  connections: z.number().int('must be a whole number').positive('must be greater than 0'),
  /** Sustained dispatches per second per key (token-bucket refill rate). */
  dispatch_rate: z.number().positive('must be a number of dispatches per second above 0'),
  /** Token-bucket size: dispatches a key may send at once after a quiet spell. */
  dispatch_burst: z.number().int('must be a whole number').positive('must be greater than 0'),
  /** Events that may wait in one recipient's offline queue. */
  queue_per_recipient: z.number().int('must be a whole number').positive('must be greater than 0'),
});
export type PlanLimits = z.infer<typeof PlanLimits>;

/** Monthly price. Amounts are configuration, never part of the wire contract. */
export const PlanPrice = z.object({
  usd: z.number().nonnegative('must be 0 or more (a monthly amount in US dollars)'),
  kes: z.number().nonnegative('must be 0 or more (a monthly amount in Kenyan shillings)'),
});
export type PlanPrice = z.infer<typeof PlanPrice>;

export const Plan = z.object({
  /** Stable id stored on subscriptions (`free`, `hobby`, `startup`, ...). */
  id: z
    .string()
    .regex(
      /^[a-z][a-z0-9_-]{0,31}$/,
      'must be 1 to 32 of a-z, 0-9, _ or -, starting with a letter',
    ),
  name: z.string().min(1, 'must be the name users see, such as Hobby'),
  /** Paid plans may hold Live keys; the free plan may not. */
  paid: z.boolean(),
  limits: PlanLimits,
  price: PlanPrice,
});
export type Plan = z.infer<typeof Plan>;

/** The plan catalogue (config/plans.json by default): every plan, and the Test-key limits. */
export const PlanCatalogue = z
  .object({
    plans: z.array(Plan).min(1),
    /** Limits of a Test key, whatever the account's plan. */
    test_key_limits: PlanLimits,
  })
  .superRefine((catalogue, ctx) => {
    const seen = new Set<string>();
    catalogue.plans.forEach((plan, i) => {
      if (seen.has(plan.id)) {
        ctx.addIssue({
          code: 'custom',
          path: ['plans', i, 'id'],
          message: `plan id "${plan.id}" appears twice; plan ids must be unique`,
        });
      }
      seen.add(plan.id);
    });
    const free = catalogue.plans.find((p) => p.id === 'free');
    if (free === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['plans'],
        message: 'the catalogue must hold a plan with id "free" (the plan of a new account)',
      });
    } else if (free.paid) {
      ctx.addIssue({
        code: 'custom',
        path: ['plans', catalogue.plans.indexOf(free), 'paid'],
        message: 'the "free" plan must have paid: false',
      });
    }
  });
export type PlanCatalogue = z.infer<typeof PlanCatalogue>;
