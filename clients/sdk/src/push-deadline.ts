import { isUuidV4 } from '@herald/proto/wire';
import { HeraldError, type HeraldErrorKind } from './errors.js';

/**
 * What every `@herald/sdk/push` call shares: its recipient and deadline checks, the deadline
 * itself, and errors of kinds the core's HeraldError does not derive.
 */

const TIMEOUT_DEFAULT = 30_000;
const TIMEOUT_MAX = 300_000;

/** Throws a TypeError naming `recipient` or `timeoutMs` of `push.{call}` when either is bad. */
export function check(opts: { recipient?: unknown; timeoutMs?: unknown }, call: string): void {
  if (typeof opts !== 'object' || opts === null || !isUuidV4(opts.recipient))
    throw new TypeError(`Herald: push.${call} needs recipient: a UUID v4`);
  const t = opts.timeoutMs;
  if (
    t !== undefined &&
    !(Number.isSafeInteger(t) && (t as number) >= 1 && (t as number) <= TIMEOUT_MAX)
  )
    throw new TypeError(
      `Herald: push.${call} timeoutMs must be an integer from 1 to ${TIMEOUT_MAX} (ms), got ${String(t)}`,
    );
}

/**
 * Runs `work` with a deadline; past it, rejects with `timeout` and aborts its requests.
 * `waitingOn` says who did not answer, for the message.
 */
export async function within<T>(
  timeoutMs: number | undefined,
  call: string,
  work: (signal: AbortSignal) => Promise<T>,
  waitingOn = "the browser's push service or Herald",
): Promise<T> {
  const ms = timeoutMs ?? TIMEOUT_DEFAULT;
  const abort = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const err = new HeraldError(
        'timeout',
        `push.${call} did not finish within ${ms} ms (timeoutMs): ${waitingOn} did not answer`,
      );
      abort.abort(err);
      reject(err);
    }, ms);
  });
  try {
    return await Promise.race([work(abort.signal), deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** A push error of the given kind (HeraldError derives kinds from codes it knows; these are new). */
export function pushError(code: string, message: string, kind: HeraldErrorKind, cause?: unknown) {
  const err = new HeraldError(code, message, { cause });
  // Set here rather than in errors.ts, whose every byte is in the core bundle.
  Object.defineProperty(err, 'kind', { value: kind });
  return err;
}
