import {
  STATUS_STREAM,
  StatusBatchEnvelope,
  StatusEvent,
  statusStreamConfig,
  subjects,
} from '@herald/proto';
import { eventually } from '@herald/testkit';
import type { StreamConfig } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACCOUNT_A } from './support/auth-responder.js';
import {
  type IngressFixture,
  newRecipient,
  notifyBody,
  startIngressFixture,
} from './support/fixture.js';
import { request } from './support/http.js';

let fx: IngressFixture;

// No status stream at first: to ingress (its own NATS user) it looks like a cluster without quorum.
beforeAll(async () => {
  fx = await startIngressFixture({ STATUS_ACK_TIMEOUT_MS: '100' });
});
afterAll(() => fx?.stop());

const gauge = async (name: string) =>
  (await fx.ingress.registry.getSingleMetric(name)?.get())?.values[0]?.value ?? 0;

/** The ids of the records HERALD_STATUS holds on account A's subject. */
async function storedIds(): Promise<Set<string>> {
  const info = await fx.jsm.streams.info(STATUS_STREAM);
  const ids = new Set<string>();
  for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq++) {
    const msg = await fx.jsm.streams.getMessage(STATUS_STREAM, { seq });
    if (msg.subject !== subjects.status(ACCOUNT_A)) continue;
    const body: unknown = msg.json();
    const batch = StatusBatchEnvelope.safeParse(body);
    const records = batch.success ? batch.data.records : [body];
    for (const r of records) ids.add(StatusEvent.parse(r).id);
  }
  return ids;
}

describe('ingress status records while the status stream is missing (issue 39)', () => {
  it('holds them unacknowledged, publishes them again, and stores every one once the stream exists', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await request(fx.baseUrl, { body: notifyBody(newRecipient()) });
      expect(res.status).toBe(202);
      ids.push(res.json.id as string);
    }
    await eventually(
      async () => (await gauge('herald_status_messages_republished_total')) >= 3,
      'the held records published again',
    );
    expect(await gauge('herald_status_messages_pending')).toBeGreaterThan(0);
    await fx.jsm.streams.add(statusStreamConfig() as unknown as Partial<StreamConfig>);
    await eventually(
      async () => (await gauge('herald_status_messages_pending')) === 0,
      'every held status message acked',
    );
    const stored = await storedIds();
    expect(ids.filter((id) => !stored.has(id))).toEqual([]);
    expect(await gauge('herald_status_messages_dropped_total')).toBe(0);
  });
});
