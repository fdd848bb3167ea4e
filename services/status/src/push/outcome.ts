import type { PushResult } from './metrics.js';
import type { SendResult } from './send.js';

/** What one answer of a push service means (RFC 8030 §5, and what the big services send). */
export type Verdict =
  | { kind: 'success'; result: PushResult }
  | { kind: 'gone'; result: PushResult }
  | { kind: 'too_large'; result: PushResult }
  | { kind: 'retry'; result: PushResult; retryAfter: string | undefined }
  | { kind: 'rejected'; result: PushResult; alarm: boolean };

export function classify(r: SendResult): Verdict {
  const s = r.status;
  if (s === null) {
    if (r.failure === 'refused') return { kind: 'rejected', result: 'refused', alarm: false };
    return { kind: 'retry', result: 'retry', retryAfter: undefined };
  }
  if (s === 200 || s === 201 || s === 202) return { kind: 'success', result: 'success' };
  if (s === 404 || s === 410) return { kind: 'gone', result: 'gone' };
  if (s === 413) return { kind: 'too_large', result: 'too_large' };
  if (s === 429 || s >= 500) return { kind: 'retry', result: 'retry', retryAfter: r.retryAfter };
  // 400, 401, 403: the request or the VAPID key is wrong, every retry would be too.
  return { kind: 'rejected', result: 'rejected', alarm: s === 400 || s === 401 || s === 403 };
}
