import { createLogger } from '@herald/kit';
import { PushMessage } from '@herald/proto';
import { connect, type NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { createStatusService, type StatusService } from '../src/service.js';
import { type PushFixture, pending, sleep, startPushFixture, subscribed } from './push-support.js';
import { eventually, uuid } from './support.js';

let p: PushFixture;
let second: StatusService;
let nc: NatsConnection;
beforeAll(async () => {
  // Claims of one recipient's wave at a time, answered slowly: both instances must take part.
  p = await startPushFixture({ PUSH_COALESCE_MS: '0', PUSH_CLAIM_BATCH: '4' });
  p.push.delayMs = 200;
  // A second status instance on the same NATS and Postgres: its own writer and sender.
  nc = await connect(p.f.nats.connectOptions('status'));
  const config = loadConfig({
    ...p.f.nats.env('status'),
    DATABASE_URL: p.f.pg.url,
    TLS_DISABLED: 'true',
    LOG_LEVEL: 'silent',
    ...p.env,
    // It looks every 10 ms while the first goes by its timers: they race for every recipient.
    PUSH_POLL_MS: '10',
  });
  second = createStatusService(config, {
    nc,
    db: p.f.db,
    logger: createLogger('status', 'silent'),
  });
  await second.start();
});
afterAll(async () => {
  await second?.close();
  await nc?.close();
  await p?.close();
});

describe('push with two status instances', () => {
  it('pushes each event at most once per subscription, whichever instance claims it', async () => {
    const account = uuid();
    const recipients = Array.from({ length: 8 }, () => uuid());
    const subs = new Map<string, string>();
    for (const r of recipients) subs.set(r, (await subscribed(p, account, r)).sub.endpoint);
    const events = new Map<string, string>();
    // Four waves, each due at its own time, so both instances' timers and polls claim.
    for (let wave = 0; wave < 4; wave++) {
      for (const r of recipients) {
        const id = uuid();
        events.set(id, r);
        pending(p, account, r, id, { after_ms: 1000 + wave * 150 });
      }
      await sleep(100);
    }
    const covered = (endpoint: string) =>
      p.push.accepted(endpoint).flatMap((a) => PushMessage.parse(a.message).ids);
    await eventually(
      () => [...subs.values()].every((e) => covered(e).length >= 4),
      'every event pushed',
      10_000,
    );
    await sleep(2000);
    for (const [r, endpoint] of subs) {
      const ids = covered(endpoint);
      expect(ids.length, `recipient ${r}: ${ids}`).toBe(new Set(ids).size);
      expect(new Set(ids)).toEqual(
        new Set([...events].filter(([, rr]) => rr === r).map(([id]) => id)),
      );
    }
    const sent = async (s: StatusService) =>
      (await s.registry.getSingleMetric('herald_push_messages_total')?.get())?.values.find(
        (v) => v.labels.result === 'success',
      )?.value ?? 0;
    // Both sent (the race was run), and together exactly one push per event wave and recipient at most.
    expect(await sent(p.f.service)).toBeGreaterThan(0);
    expect(await sent(second)).toBeGreaterThan(0);
    p.push.delayMs = 0;
    const left = await p.f.db.selectFrom('push_due').select('event_id').execute();
    expect(left.filter((l) => events.has(l.event_id))).toEqual([]);
  });
});
