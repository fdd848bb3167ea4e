import { describe, expect, it } from 'vitest';
import { connect, newTenant, notify, recipient, useStack } from './fixtures.js';

/** QUEUE_MAX_RECIPIENTS, small: the queue holds events for at most this many recipients. */
const MAX_RECIPIENTS = 3;

/**
 * The queue's ceiling on recipients through the real services: ingress admits offline recipients
 * up to QUEUE_MAX_RECIPIENTS, refuses the next new one with 507 queue_recipients_full naming the
 * setting, still queues for the recipients it admitted, and the real edge delivers every event it
 * answered 202 for. The stack is this file's own, so its queue starts empty.
 */
describe('the queue ceiling on recipients (QUEUE_MAX_RECIPIENTS)', () => {
  const stack = useStack({
    services: ['auth', 'ingress-api', 'socket-edge'],
    env: { 'ingress-api': { QUEUE_MAX_RECIPIENTS: String(MAX_RECIPIENTS) } },
  });

  it('admits exactly the ceiling, refuses the next new recipient clearly, and loses nothing it accepted', async () => {
    const s = stack();
    const tenant = await newTenant(s);
    const admitted = Array.from({ length: MAX_RECIPIENTS }, recipient);
    const ids = new Map<string, string[]>(admitted.map((to) => [to, []]));
    const queue = async (to: string, n: number) => {
      const res = await notify(s, tenant, to, { n });
      expect(res.status).toBe(202);
      ids.get(to)?.push(res.body.id);
    };
    // Up to the ceiling, the last one exactly at it: every one accepted.
    for (const [i, to] of admitted.entries()) await queue(to, i);

    const extra = recipient();
    const refused = await notify(s, tenant, extra, { n: 'past the ceiling' });
    expect(refused.status).toBe(507);
    expect(refused.body.error).toMatchObject({ code: 'queue_recipients_full', field: 'recipient' });
    expect(refused.body.error.message).toContain(
      `already holds events for ${MAX_RECIPIENTS} recipients, the most QUEUE_MAX_RECIPIENTS=${MAX_RECIPIENTS} allows`,
    );
    expect(refused.body.error.message).toContain('nothing was stored');

    // A recipient already holding events is still queued for, after the refusal as before it.
    const [first, second] = admitted as [string, string];
    await queue(first, 10);
    await queue(second, 11);
    // The ceiling is on what is stored, not on delivery: a connected recipient gets it live.
    const online = await connect(s, { apiKey: tenant.key.key, recipient: extra, v1: true });
    const live = await notify(s, tenant, extra, { n: 'live' });
    expect(live.status).toBe(200);
    await online.waitForFrames(1);
    expect(online.events().map((e) => e.id)).toEqual([live.body.id]);
    await online.close();

    // Every event answered 202 arrives when its recipient connects, in order, with its id.
    for (const to of admitted) {
      const sock = await connect(s, { apiKey: tenant.key.key, recipient: to, v1: true });
      const expected = ids.get(to) ?? [];
      await sock.waitForFrames(expected.length, 20_000);
      expect(sock.events().map((e) => e.id)).toEqual(expected);
      await sock.close();
    }
  });
});
