import { envInt } from '@herald/kit';

/** Default MAX_PUSHER_APPS_PER_ACCOUNT. */
export const DEFAULT_MAX_PUSHER_APPS = 10;

/** Most Pusher apps per account; shared with the admin CLI, which applies the same rule. */
export const MaxPusherApps = envInt(DEFAULT_MAX_PUSHER_APPS, 1, 1000);

/** The Pusher wing's variables, merged into auth's Env (the admin CLI reads the same). */
export const PusherEnvShape = {
  /**
   * Most Pusher apps an account may hold (409 `too_many_apps` past it: delete one first), so no
   * account can grow the table without bound. Default 10; 1 to 1000.
   */
  MAX_PUSHER_APPS_PER_ACCOUNT: MaxPusherApps,
};
