import { DEVICE_ID } from './device.js';

/**
 * `push.registerDevice`: a native app's FCM or APNs device token, registered with Herald so that
 * Herald pushes through the provider (issue 40). The app obtains the token itself; these checks
 * catch the mistakes that would otherwise come back as a refusal, or as pushes that never arrive.
 */

/** `push.registerDevice(options)`. */
export interface DeviceRegistration {
  /** The recipient (UUID v4) whose events this device should be notified of. Required. */
  recipient: string;
  /** `'fcm'` for a Firebase Cloud Messaging registration token, `'apns'` for an APNs device token. Required. */
  kind: 'fcm' | 'apns';
  /**
   * The device token the provider gave the app (not the recipient token: that comes from
   * `options.getToken`). FCM: the registration token as given; APNs: the device token as hex.
   * Required; at most 4096 characters.
   */
  token: string;
  /** This installation's device id (1-64 of [A-Za-z0-9_-]). Default: `options.device`. */
  device?: string;
  /** Give up (`timeout`) after this many ms. Default 30000; 1 to 300000. */
  timeoutMs?: number;
}

/** The longest device token accepted: the bound recipient tokens have too. */
export const DEVICE_TOKEN_MAX = 4096;

const WHERE = 'Herald: push.registerDevice';

/** Throws a TypeError naming the first bad field of `opts`; returns the device id it gives. */
export function checkDevice(opts: DeviceRegistration): string | undefined {
  const { kind, token, device } = opts;
  if (kind !== 'fcm' && kind !== 'apns')
    throw new TypeError(
      `${WHERE} needs kind: 'fcm' (a Firebase registration token) or 'apns' (an APNs device token), got ${JSON.stringify(kind)}`,
    );
  if (typeof token !== 'string' || token === '')
    throw new TypeError(
      `${WHERE} needs token: the device token ${kind === 'fcm' ? "FCM's getToken()" : 'APNs'} gave the app, as a string`,
    );
  if (token.length > DEVICE_TOKEN_MAX)
    throw new TypeError(
      `${WHERE} token must be at most ${DEVICE_TOKEN_MAX} characters, got ${token.length}: pass the device token itself`,
    );
  if (/^eyJ[\w-]*\.[\w-]*\.[\w-]*$/.test(token))
    throw new TypeError(
      `${WHERE} token is a JWT, which a device token never is: pass the ${kind} device token here; the recipient token comes from options.getToken`,
    );
  if (kind === 'apns' && !/^(?:[0-9a-fA-F]{2})+$/.test(token))
    throw new TypeError(
      `${WHERE} token must be the APNs device token as hex (e.g. 64 characters of 0-9a-f): convert the bytes iOS gives to hex`,
    );
  if (kind === 'fcm' && /[^\x21-\x7e]/.test(token))
    throw new TypeError(
      `${WHERE} token must be the FCM registration token as getToken() gives it: printable ASCII without spaces`,
    );
  if (device !== undefined && (typeof device !== 'string' || !DEVICE_ID.test(device)))
    throw new TypeError(`${WHERE} device must be 1-64 of [A-Za-z0-9_-], or left out`);
  return device;
}
