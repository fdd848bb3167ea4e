import { envInt } from '@herald/kit';

/**
 * The webhooks wing's variables, merged into auth's Env (the admin CLI reads the same from its
 * environment). Endpoints live in the status service; auth only asks it.
 */
export const WebhookEnvShape = {
  /**
   * How long auth waits for the status service to answer a webhook request
   * (`rt.webhookapi.request`), ms: `create` resolves the URL's host before it answers. Past it the
   * request is 503 `unavailable` ("status service unavailable"). Default 10000; 100 to 60000.
   */
  WEBHOOK_API_TIMEOUT_MS: envInt(10_000, 100, 60_000),
};
