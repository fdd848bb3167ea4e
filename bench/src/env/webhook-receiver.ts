import { createHmac, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { makeCerts } from '@herald/testkit';

/** One webhook message as it reached the receiver. */
export interface WebhookArrival {
  /** `webhook-id`: the same on every retry of one message. */
  messageId: string;
  /** The body's `type` (`event.queued`, …). */
  type: string;
  /** The body's `data.id`: the event the transition is of. */
  eventId: string;
  /** performance.now() when its body had been read. */
  at: number;
}

/** Most bytes of one webhook body the receiver reads (the spec's bodies stay under 20 KB). */
const BODY_MAX = 64 * 1024;

/**
 * The customer's side of figure 7: an HTTPS server with a CA of its own (the status service trusts
 * it through WEBHOOK_CA_FILE, as it would a receiver behind a private CA), on 127.0.0.1, in the
 * load generator's process, so its CPU is never charged to Herald. Per message it checks the three
 * Standard Webhooks headers and the `v1` HMAC against the endpoint's secret (node:crypto, a few µs:
 * nothing heavy), reads `type` and `data.id`, answers 204 and hands the arrival on. A message that
 * fails a check is answered 400 and counted, so a figure cannot count what a receiver would refuse.
 */
export interface WebhookReceiver {
  /** The endpoint URL to register. */
  url: string;
  /** The receiver's CA, for the status service's WEBHOOK_CA_FILE. */
  caFile: string;
  /** Trusts an endpoint's signing secret (`whsec_…`): signatures are checked against it. */
  addSecret(secret: string): void;
  /** Called with every accepted message. */
  onArrival: (a: WebhookArrival) => void;
  /** Messages answered 400 so far, and why the first was. */
  refused: number;
  firstRefusal?: string;
  stop(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const certs = await makeCerts();
  const secrets: Buffer[] = [];
  const server = createServer({
    cert: readFileSync(certs.certFile),
    key: readFileSync(certs.keyFile),
  });
  const receiver: WebhookReceiver = {
    url: '',
    caFile: certs.caFile,
    addSecret(secret) {
      secrets.push(Buffer.from(secret.replace(/^whsec_/, ''), 'base64'));
    },
    onArrival: () => {},
    refused: 0,
    stop: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const refuse = (res: { writeHead(s: number): unknown; end(): void }, why: string) => {
    receiver.refused++;
    receiver.firstRefusal ??= why;
    res.writeHead(400);
    res.end();
  };
  server.on('request', (req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= BODY_MAX) chunks.push(c);
    });
    req.on('end', () => {
      const at = performance.now();
      if (size > BODY_MAX) return refuse(res, `a body of ${size} bytes`);
      const body = Buffer.concat(chunks).toString('utf8');
      const why = checkSignature(req.headers, body, secrets);
      if (why) return refuse(res, why);
      let parsed: { type?: unknown; data?: { id?: unknown } };
      try {
        parsed = JSON.parse(body) as typeof parsed;
      } catch {
        return refuse(res, 'a body that is not JSON');
      }
      if (typeof parsed.type !== 'string' || typeof parsed.data?.id !== 'string')
        return refuse(res, `a body without type or data.id: ${body.slice(0, 200)}`);
      res.writeHead(204);
      res.end();
      receiver.onArrival({
        messageId: String(req.headers['webhook-id']),
        type: parsed.type,
        eventId: parsed.data.id,
        at,
      });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  receiver.url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
  return receiver;
}

/**
 * Why a message fails the Standard Webhooks check, or undefined when one of its `v1,` signatures
 * is the HMAC-SHA256 of `{id}.{timestamp}.{body}` under a trusted secret.
 */
export function checkSignature(
  headers: Record<string, string | string[] | undefined>,
  body: string,
  secrets: readonly Buffer[],
): string | undefined {
  const id = headers['webhook-id'];
  const ts = headers['webhook-timestamp'];
  const sig = headers['webhook-signature'];
  if (typeof id !== 'string' || typeof ts !== 'string' || typeof sig !== 'string')
    return 'a message without webhook-id, webhook-timestamp or webhook-signature';
  if (!/^\d+$/.test(ts)) return `webhook-timestamp ${ts.slice(0, 40)} is not unix seconds`;
  const given = sig
    .split(' ')
    .filter((s) => s.startsWith('v1,'))
    .map((s) => Buffer.from(s.slice(3), 'base64'));
  for (const secret of secrets) {
    const want = createHmac('sha256', secret).update(`${id}.${ts}.${body}`).digest();
    if (given.some((g) => g.length === want.length && timingSafeEqual(g, want))) return undefined;
  }
  return 'no v1 signature matches a trusted secret';
}
