import type { Logger } from '@herald/kit';
import type { BillingService } from './service.js';

export interface BillingScheduler {
  /** Stops the timer and waits for a sweep in progress. */
  stop(): Promise<void>;
}

/**
 * Runs `billing.sweep()` every `intervalMs`, never two at once (a slow provider delays the next
 * run rather than stacking them).
 */
export function startBillingScheduler(
  billing: BillingService,
  intervalMs: number,
  logger: Logger,
): BillingScheduler {
  let stopped = false;
  let running: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;

  const tick = () => {
    running = billing
      .sweep()
      .then(
        (r) => {
          if (r.settled || r.reminders) logger.info(r, 'billing sweep');
        },
        (err: unknown) => logger.error({ err }, 'billing sweep failed'),
      )
      .finally(() => {
        running = undefined;
        if (!stopped) timer = setTimeout(tick, intervalMs);
      });
  };
  timer = setTimeout(tick, intervalMs);
  timer.unref?.();

  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
