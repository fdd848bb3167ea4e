import type { PusherAppVerifier, VerifiedPusherApp } from '@herald/access';
import { HeraldError, PUSHER_APP_ID } from '@herald/proto';

/**
 * The app of a Pusher API request's path (issue 41): from the verifier's cache without a promise
 * when it is there, else looked up. An unknown app is 401, as a bad signature is.
 */

/** The apps' verifier: `cachedById` is optional (a lookup alone answers the same, later). */
export type PusherApps = Pick<PusherAppVerifier, 'lookup'> &
  Partial<Pick<PusherAppVerifier, 'cachedById'>>;

export interface AppLookupDeps {
  apps: PusherApps;
  pipeline: { refuseWhileDown(): void };
}

/**
 * {@link lookupApp} without a promise while the app's answer is cached (its refusal thrown the
 * same way); undefined when it must be asked for.
 */
export function cachedApp(deps: AppLookupDeps, appId: string): VerifiedPusherApp | undefined {
  if (deps.apps.cachedById === undefined || !PUSHER_APP_ID.test(appId)) return undefined;
  deps.pipeline.refuseWhileDown();
  try {
    return deps.apps.cachedById(appId);
  } catch (err) {
    throw unknownApp(err, appId);
  }
}

/** A lookup's refusal as the API answers it: an unknown app names the path's id. */
function unknownApp(err: unknown, appId: string): unknown {
  if (!(err instanceof HeraldError) || err.code !== 'invalid_api_key') return err;
  return unknownAppError(appId);
}

function unknownAppError(appId: string): HeraldError {
  return new HeraldError(
    'invalid_api_key',
    `Unknown app_id ${JSON.stringify(appId.slice(0, 24))}: use the app id pusher-app create printed`,
    { field: 'app_id' },
  );
}

/** The app of the path's id; an unknown one is 401, as a bad signature is (and counted so). */
export async function lookupApp(deps: AppLookupDeps, appId: string): Promise<VerifiedPusherApp> {
  if (!PUSHER_APP_ID.test(appId)) throw unknownAppError(appId);
  deps.pipeline.refuseWhileDown();
  try {
    return await deps.apps.lookup({ app_id: appId });
  } catch (err) {
    throw unknownApp(err, appId);
  }
}
