import { subjects } from '@herald/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACCOUNT_A, KEYS } from './support/auth-responder.js';
import {
  type IngressFixture,
  newRecipient,
  notifyBody,
  queuedMessages,
  startIngressFixture,
} from './support/fixture.js';
import { request } from './support/http.js';

const MAX_RECIPIENTS = 2;

/**
 * QUEUE_MAX_RECIPIENTS against the real nats-server, counted afresh for every event (no kept
 * count): recipients another instance queued for count too, a recipient holding events is always
 * admitted, and a batch gets the refusal per event while its other events go through. The
 * whole-stack test (test/e2e/queue-ceiling.test.ts) covers delivery and the kept count.
 */
describe('the queue ceiling on recipients, counted afresh', () => {
  let fx: IngressFixture;
  /** The recipients another ingress instance queued for: the queue is at its ceiling. */
  const held = [newRecipient(), newRecipient()] as const;
  beforeAll(async () => {
    fx = await startIngressFixture({
      QUEUE_MAX_RECIPIENTS: String(MAX_RECIPIENTS),
      QUEUE_DEPTH_SCAN_CACHE_MS: '0',
    });
    // Another instance's stores (a publish as ingress makes it) count as much as this one's.
    const js = fx.peer.jetstream();
    for (const to of held) await js.publish(subjects.queue(ACCOUNT_A, to), '{"n":0}');
  });
  afterAll(async () => {
    await fx?.stop();
  });

  const post = (recipient: string, n: number) =>
    request(fx.baseUrl, { body: notifyBody(recipient, { payload: { n } }) });

  it('refuses a new recipient with 507 naming the setting, and still queues for those holding events', async () => {
    const fresh = newRecipient();
    const refused = await post(fresh, 1);
    expect(refused.status).toBe(507);
    expect(refused.json.error).toMatchObject({ code: 'queue_recipients_full', field: 'recipient' });
    expect(refused.json.error.message).toContain(`QUEUE_MAX_RECIPIENTS=${MAX_RECIPIENTS} allows`);
    expect(await queuedMessages(fx.jsm, fresh)).toHaveLength(0);

    const [a, b] = held;
    expect((await post(a, 2)).status).toBe(202);
    expect((await post(b, 3)).status).toBe(202);
    // Nothing stored was touched: each holds the other instance's event and this one's.
    expect(await queuedMessages(fx.jsm, a)).toHaveLength(2);
    expect(await queuedMessages(fx.jsm, b)).toHaveLength(2);
  });

  it('refuses per event in a batch, whose events for recipients holding some are queued', async () => {
    const fresh = newRecipient();
    const res = await request(fx.baseUrl, {
      path: '/notify/batch',
      body: {
        api_key: KEYS.mobile,
        client: 'mobile',
        events: [
          { recipient: held[0], payload: 1 },
          { recipient: fresh, payload: 2 },
          { recipient: held[1], payload: 3 },
        ],
      },
    });
    expect(res.status).toBe(200);
    expect(res.json.results[0]).toMatchObject({ status: 'User offline, notification saved' });
    expect(res.json.results[1]).toMatchObject({ error: { code: 'queue_recipients_full' } });
    expect(res.json.results[2]).toMatchObject({ status: 'User offline, notification saved' });
    expect(await queuedMessages(fx.jsm, fresh)).toHaveLength(0);
  });
});
