import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { run } from '@herald/testkit/compose';
import { Webhook } from 'standardwebhooks';

// The webhook receiver of the container tests (make test-deploy, make test-cluster): an HTTPS
// server on the Docker host, with a certificate of its own CA, verifying every request with the
// `standardwebhooks` library (never Herald's own code). The CA was made by scripts/lib/stack-test.sh
// before the stack started, so status trusts it (WEBHOOK_CA_FILE, in the env file the script
// names in HERALD_WEBHOOK_ENV_FILE, with WEBHOOK_ALLOW_PRIVATE=true: the receiver's address is a
// private one). The receiver listens on the gateway of the stack's `egress` network, the address
// by which the status containers reach the host; its certificate names that address.

const execFileAsync = promisify(execFile);

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

/** The IPv4 gateway of `<project>_egress`: the host as the status containers reach it. */
export async function egressGateway(project: string): Promise<string> {
  const network = `${project}_egress`;
  const res = await run('docker', [
    'network',
    'inspect',
    network,
    '--format',
    '{{range .IPAM.Config}}{{.Gateway}} {{end}}',
  ]);
  const gateway = res.stdout.split(/\s+/).find((a) => /^\d+\.\d+\.\d+\.\d+$/.test(a));
  if (res.code !== 0 || !gateway)
    throw new Error(`no IPv4 gateway for network ${network}: ${res.stderr || res.stdout}`);
  return gateway;
}

/** A key and certificate for `ip`, signed by the CA in HERALD_WEBHOOK_CA_FILE's folder (the push service's too). */
export async function issueCert(ip: string): Promise<{ key: string; cert: string }> {
  const caFile = process.env.HERALD_WEBHOOK_CA_FILE;
  if (!caFile)
    throw new Error(
      'HERALD_WEBHOOK_CA_FILE is not set: the container tests run under scripts/test-deploy.sh or scripts/test-cluster.sh, which make the receiver CA',
    );
  const caKey = join(caFile, '..', 'ca.key');
  const dir = mkdtempSync(join(tmpdir(), 'herald-receiver-'));
  const f = (n: string) => join(dir, n);
  const ssl = (args: string[]) => execFileAsync('openssl', args);
  await ssl(
    ['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'].concat([
      '-subj',
      `/CN=${ip}`,
      '-keyout',
      f('tls.key'),
      '-out',
      f('tls.csr'),
    ]),
  );
  writeFileSync(f('ext.cnf'), `subjectAltName=IP:${ip}\nextendedKeyUsage=serverAuth\n`);
  await ssl(
    ['x509', '-req', '-in', f('tls.csr'), '-CA', caFile, '-CAkey', caKey]
      .concat(['-CAcreateserial', '-CAserial', f('ca.srl'), '-days', '2'])
      .concat(['-extfile', f('ext.cnf'), '-out', f('tls.crt')]),
  );
  return { key: readFileSync(f('tls.key'), 'utf8'), cert: readFileSync(f('tls.crt'), 'utf8') };
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
