/**
 * The Push page's pure helpers (issue 40): what the page checks in a file before it sends it, and
 * how it words what the account API answered. The account API checks everything again; these
 * only say sooner, and name the field, what is wrong with a file picked by mistake.
 */
export { fieldError } from './api.js';

/** Larger than any service-account JSON or .p8 key (the API caps a PEM at 8,192 characters). */
export const PUSH_FILE_MAX_BYTES = 64 * 1024;

/** The outcome of a check: the value to send, or an error naming the field and the fix. */
export type Checked<T> = { ok: true; value: T } | { ok: false; error: string };

const FCM_HINT =
  "give the service-account key file Firebase's console downloads (Project settings → Service accounts → Generate new private key)";

/**
 * A Firebase service-account key file's text, checked as far as the page can: JSON, an object,
 * `"type": "service_account"` when it says a type, and the three fields Herald uses. The value is
 * the parsed object, sent as `service_account`.
 */
export function checkFcmServiceAccount(text: string): Checked<Record<string, unknown>> {
  const field = 'Service account file';
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { ok: false, error: `${field}: not JSON: ${FCM_HINT}.` };
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    return { ok: false, error: `${field}: not a JSON object: ${FCM_HINT}.` };
  }
  const sa = json as Record<string, unknown>;
  if (sa.type !== undefined && sa.type !== 'service_account') {
    return {
      ok: false,
      error: `${field}: its "type" is ${JSON.stringify(sa.type)}, not "service_account" (a google-services.json or an OAuth client file will not do): ${FCM_HINT}.`,
    };
  }
  const missing = ['project_id', 'client_email', 'private_key'].filter(
    (k) => typeof sa[k] !== 'string' || sa[k] === '',
  );
  if (missing.length > 0) {
    return {
      ok: false,
      error: `${field}: no ${missing.join(', ')}: a service-account key file has project_id, client_email and private_key; ${FCM_HINT}.`,
    };
  }
  return { ok: true, value: sa };
}

/** An APNs .p8 key file's text, checked: a PEM private key. The value is the text, trimmed. */
export function checkApnsKey(text: string): Checked<string> {
  const pem = text.trim();
  if (!/^-----BEGIN (EC )?PRIVATE KEY-----[\s\S]+-----END (EC )?PRIVATE KEY-----$/.test(pem)) {
    return {
      ok: false,
      error:
        'Key file (.p8): not a PEM private key (-----BEGIN PRIVATE KEY-----): give the AuthKey_XXXXXXXXXX.p8 file Apple lets you download once (Certificates, Identifiers & Profiles → Keys).',
    };
  }
  return { ok: true, value: pem };
}

/** The key id Apple names a .p8 file with (`AuthKey_ABC123DEFG.p8`), to prefill the field. */
export function keyIdFromFileName(name: string): string | undefined {
  return /^AuthKey_([A-Z0-9]{10})\.p8$/.exec(name)?.[1];
}

/** A file's size, checked against {@link PUSH_FILE_MAX_BYTES} before it is read. */
export function checkFileSize(field: string, size: number): string | undefined {
  if (size === 0) return `${field}: the file is empty: pick the key file itself.`;
  if (size > PUSH_FILE_MAX_BYTES) {
    return `${field}: ${size} bytes is larger than any key file (at most ${PUSH_FILE_MAX_BYTES}): pick the key file itself.`;
  }
  return undefined;
}

/** What `POST /v1/push/subscriptions/:id/test` answered. */
export interface PushTestResult {
  http_status: number | null;
  error: string | null;
  latency_ms: number;
}

/** A test push's outcome in one line: accepted, refused with its status, or not answered. */
export function testOutcome(r: PushTestResult): string {
  const took = `in ${r.latency_ms} ms`;
  if (r.http_status !== null && r.http_status >= 200 && r.http_status < 300 && !r.error) {
    return `Accepted by the push service (HTTP ${r.http_status}) ${took}.`;
  }
  if (r.http_status !== null) {
    return `Refused by the push service: HTTP ${r.http_status}${r.error ? ` (${r.error})` : ''} ${took}.`;
  }
  return `No answer from the push service: ${r.error ?? 'unknown error'} (after ${r.latency_ms} ms).`;
}

/** An event's `pushed`, as the delivery page shows it beside sent and delivered. */
export function pushedText(
  pushed: { at: string; subscriptions: number } | null | undefined,
  when: (iso: string) => string,
): string {
  if (!pushed) return '—';
  const n = pushed.subscriptions;
  return `${when(pushed.at)} (${n} ${n === 1 ? 'subscription' : 'subscriptions'})`;
}
