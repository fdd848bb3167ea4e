import { openSocket } from '@herald/testkit';
import { describe, expect, it } from 'vitest';
import {
  allDelivered,
  connect,
  newTenant,
  notify,
  recipient,
  runRetentionOnce,
  useStack,
} from './fixtures.js';

/**
 * Issue 32, per-device delivery, through the whole path: /notify answers 202 while the recipient
 * has no socket, and each device (a /ws/connect with `device`) then gets those events once, the
 * status turning `delivered` at the first proof.
 */
/** The connect query of a mobile socket of `to`, with its device. */
const withDevice = (key: string, to: string, device: string) =>
  new URLSearchParams({ api_key: key, recipient: to, client: 'mobile', device }).toString();

describe('per-device delivery, end to end', () => {
  const stack = useStack({ services: ['auth', 'ingress-api', 'socket-edge', 'status'] });

  it('gives every device the events queued while the user was offline, once each', async () => {
    const s = stack();
    const tenant = await newTenant(s);
    const to = recipient();
    const ids: string[] = [];
    for (let n = 0; n < 3; n++) {
      const res = await notify(s, tenant, to, { n });
      expect(res.status).toBe(202);
      ids.push(res.body.id);
    }
    const phone = await connect(s, {
      apiKey: tenant.key.key,
      recipient: to,
      v1: true,
      query: withDevice(tenant.key.key, to, 'phone'),
    });
    await phone.waitForFrames(3);
    expect(phone.events().map((e) => e.id)).toEqual(ids);
    await allDelivered(s, tenant.key.key, ids);
    await phone.close();

    // The laptop, in plain framing, an hour later: the phone's proofs did not take them from it.
    const laptop = await connect(s, {
      apiKey: tenant.key.key,
      recipient: to,
      query: withDevice(tenant.key.key, to, 'laptop'),
    });
    const frames = await laptop.waitForFrames(3);
    expect(frames.map((f) => JSON.parse(f.text))).toEqual([{ n: 0 }, { n: 1 }, { n: 2 }]);

    // The phone again, beside the laptop: nothing it proved comes back; a live marker is first.
    const back = await connect(s, {
      apiKey: tenant.key.key,
      recipient: to,
      v1: true,
      query: withDevice(tenant.key.key, to, 'phone'),
    });
    const marker = await notify(s, tenant, to, 'marker');
    expect(marker.status).toBe(200);
    const [first] = await back.waitForFrames(1);
    expect(first?.envelope?.payload).toBe('marker');
    const laptopNext = await laptop.waitForFrames(4);
    expect(laptopNext[3]?.text).toBe('"marker"');
    await Promise.all([back.close(), laptop.close()]);
  });

  it("gives nothing stale to a device id reused, or a new one, after retention's run deleted the events", async () => {
    const s = stack();
    const tenant = await newTenant(s);
    const to = recipient();
    const ids: string[] = [];
    for (let n = 0; n < 2; n++) ids.push((await notify(s, tenant, to, { n })).body.id);
    const phone = await connect(s, {
      apiKey: tenant.key.key,
      recipient: to,
      v1: true,
      query: withDevice(tenant.key.key, to, 'phone'),
    });
    await phone.waitForFrames(2);
    await allDelivered(s, tenant.key.key, ids);
    await phone.close();
    // Retention's weekly run, one pass now: it deletes what the recipient's consumer acked.
    const summary = await runRetentionOnce(s);
    expect(summary).toMatchObject({ outcome: 'completed' });
    expect(summary.events_purged).toBeGreaterThanOrEqual(2);
    const socks = await Promise.all(
      ['phone', 'tablet'].map((d) =>
        connect(s, {
          apiKey: tenant.key.key,
          recipient: to,
          v1: true,
          query: withDevice(tenant.key.key, to, d),
        }),
      ),
    );
    expect((await notify(s, tenant, to, 'marker')).status).toBe(200);
    for (const sock of socks) {
      const [first] = await sock.waitForFrames(1);
      expect(first?.envelope?.payload).toBe('marker');
    }
    await Promise.all(socks.map((sock) => sock.close()));
  });

  it('refuses a device id the server cannot take, naming the field', async () => {
    const s = stack();
    const tenant = await newTenant(s);
    const to = recipient();
    const sock = openSocket(s.wsUrl, s.ca, {
      apiKey: tenant.key.key,
      recipient: to,
      query: withDevice(tenant.key.key, to, 'a.b'),
    });
    const end = await sock.ended;
    expect(end.httpStatus).toBe(400);
    expect(JSON.parse(end.httpBody ?? '')).toMatchObject({
      error: { code: 'invalid_field', field: 'device' },
    });
  });
});
