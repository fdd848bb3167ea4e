import { PushService } from '@herald/testkit';
import { egressGateway, issueCert } from '@herald/testkit/compose';

// The Web Push service of the container tests (make test-deploy, make test-cluster): the test
// kit's PushService (a real HTTPS push service that decrypts every push, RFC 8291, and verifies
// its VAPID header, RFC 8292), listening on the gateway of the stack's `egress` network with a
// certificate of the receiver CA that scripts/lib/stack-test.sh made before the stack started.
// Status trusts that CA through PUSH_CA_FILE=/tls/push-ca.crt (compose mounts HERALD_PUSH_CA_FILE
// there) and reaches the gateway's private address through PUSH_ALLOW_PRIVATE=true, both in the
// env file the script names in HERALD_WEBHOOK_ENV_FILE.

/** One push as the test kit's push service decrypted it (the sender's message, issue 40). */
export interface Pushed {
  id: string;
  /** Every event the push stands for (collapsed), newest last. */
  ids: string[];
  count: number;
  title: string;
  body?: string;
  tag: string;
  payload?: unknown;
}

/** Starts a push service on the stack's egress gateway, on a free port. */
export async function startPushService(project: string): Promise<PushService> {
  const host = await egressGateway(project);
  const caFile = process.env.HERALD_PUSH_CA_FILE;
  if (!caFile)
    throw new Error(
      'HERALD_PUSH_CA_FILE is not set: the container tests run under scripts/test-deploy.sh or scripts/test-cluster.sh, which make the receiver CA',
    );
  const tls = await issueCert(host);
  return PushService.start({ host, tls: { ...tls, caFile } });
}

/** The pushes `service` accepted for `endpoint`, decrypted. */
export const pushesTo = (service: PushService, endpoint: string): Pushed[] =>
  service.accepted(endpoint).map((a) => a.message as Pushed);
