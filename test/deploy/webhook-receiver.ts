import { createServer, type Server } from 'node:https';
import { egressGateway, issueCert } from '@herald/testkit/compose';
import { Webhook } from 'standardwebhooks';

// The webhook receiver of the container tests (make test-deploy, make test-cluster): an HTTPS
// server on the Docker host, with a certificate of its own CA, verifying every request with the
// `standardwebhooks` library (never Herald's own code). The CA was made by scripts/lib/stack-test.sh
// before the stack started, so status trusts it (WEBHOOK_CA_FILE, in the env file the script
// names in HERALD_WEBHOOK_ENV_FILE, with WEBHOOK_ALLOW_PRIVATE=true: the receiver's address is a
// private one). The receiver listens on the gateway of the stack's `egress` network, the address
// by which the status containers reach the host; its certificate names that address.

/** Largest body the receiver reads; a larger one is answered 413 and recorded as invalid. */
const BODY_LIMIT_BYTES = 1024 * 1024;

/** One message, by its webhook-id: what arrived first and how often it came. */
export interface Received {
  id: string;
  type: string;
  data: { id: string; recipient: string | null; key_id: string | null; status: string; ts: number };
  /** When it first arrived (epoch ms). */
  at: number;
  /** Requests that carried it (1: no retry, no duplicate). */
  count: number;
}

export class WebhookReceiver {
  /** Every message verified, by webhook-id. */
  readonly messages = new Map<string, Received>();
  /** Requests that failed verification (or came before the secret was known): what was wrong. */
  readonly invalid: string[] = [];
  /** Every request answered 2xx. */
  requests = 0;
  #webhook: Webhook | undefined;

  private constructor(
    readonly server: Server,
    readonly url: string,
  ) {}

  /** Starts a receiver on the stack's egress gateway, on a free port. */
  static async start(project: string): Promise<WebhookReceiver> {
    const host = await egressGateway(project);
    const tls = await issueCert(host);
    let receiver: WebhookReceiver | undefined;
    const server = createServer(tls, (req, res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      req.on('data', (c: Buffer) => {
        size += c.length;
        if (size <= BODY_LIMIT_BYTES) chunks.push(c);
      });
      req.on('end', () => {
        const status = receiver?.take(req.headers, size, Buffer.concat(chunks)) ?? 503;
        res.writeHead(status).end();
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, host, () => resolve());
    });
    const { port } = server.address() as { port: number };
    receiver = new WebhookReceiver(server, `https://${host}:${port}/hooks/herald`);
    return receiver;
  }

  /** The endpoint's secret (`whsec_…`), as `webhook create` printed it. */
  set secret(secret: string) {
    this.#webhook = new Webhook(secret);
  }

  /** How many requests beyond the first each message took (retries and duplicates). */
  repeats(): number {
    let n = 0;
    for (const m of this.messages.values()) n += m.count - 1;
    return n;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private take(headers: Record<string, string | string[] | undefined>, size: number, body: Buffer) {
    const one = (name: string) => {
      const v = headers[name];
      return Array.isArray(v) ? v.join(',') : (v ?? '');
    };
    const id = one('webhook-id');
    if (size > BODY_LIMIT_BYTES) {
      this.invalid.push(`${id}: a body of ${size} bytes`);
      return 413;
    }
    if (!this.#webhook) {
      this.invalid.push(`${id}: came before the endpoint's secret was known`);
      return 503;
    }
    let payload: Pick<Received, 'type' | 'data'>;
    try {
      payload = this.#webhook.verify(body.toString('utf8'), {
        'webhook-id': id,
        'webhook-timestamp': one('webhook-timestamp'),
        'webhook-signature': one('webhook-signature'),
      }) as Pick<Received, 'type' | 'data'>;
    } catch (err) {
      this.invalid.push(`${id}: ${(err as Error).message}`);
      return 400;
    }
    this.requests++;
    const seen = this.messages.get(id);
    if (seen) seen.count++;
    else
      this.messages.set(id, {
        id,
        type: payload.type,
        data: payload.data,
        at: Date.now(),
        count: 1,
      });
    return 200;
  }
}
