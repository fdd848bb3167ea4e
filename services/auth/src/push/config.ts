import { envInt } from '@herald/kit';

/**
 * The push wing's variables, merged into auth's Env (the admin CLI reads the same from its
 * environment). Credentials and subscriptions live in the status service; auth only asks it.
 */
export const PushEnvShape = {
  /**
   * How long auth waits for the status service to answer a push request (`rt.pushapi.request`),
   * ms: `test` waits for the push service's own answer before it replies. Past it the request is
   * 503 `unavailable` ("status service unavailable"). Default 10000; 100 to 60000.
   */
  PUSH_API_TIMEOUT_MS: envInt(10_000, 100, 60_000),
};
