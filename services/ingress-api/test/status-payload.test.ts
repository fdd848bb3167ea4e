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
import { ACCOUNT_A, answerFor, KEYS, key } from './support/auth-responder.js';
import {
  edgeStandIn,
  type IngressFixture,
  newRecipient,
  notifyBody,
  startIngressFixture,
} from './support/fixture.js';
import { request } from './support/http.js';

/** Account A's key made with `--webhook-payload`: its payloads go into the account's webhooks. */
const FLAGGED = 'hk_live_webhook_payload_key_of_account_a';

let fx: IngressFixture;

beforeAll(async () => {
  fx = await startIngressFixture();
  answerFor(FLAGGED, key('key-flagged', { webhook_payload: true }));
  // The status stream, as the status service makes it: what ingress publishes is kept here.
  await fx.jsm.streams.add(statusStreamConfig() as unknown as Partial<StreamConfig>);
});
afterAll(() => fx?.stop());

interface Stored {
  /** The message's form: one StatusEvent, or a StatusBatch of records. */
  form: 'single' | 'batch';
  record: StatusEvent;
}

/** Every record in HERALD_STATUS on account A's subject, with the form of its message. */
async function storedRecords(): Promise<Stored[]> {
  const info = await fx.jsm.streams.info(STATUS_STREAM);
  const out: Stored[] = [];
  for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq++) {
    const msg = await fx.jsm.streams.getMessage(STATUS_STREAM, { seq });
    if (msg.subject !== subjects.status(ACCOUNT_A)) continue;
    const body: unknown = msg.json();
    const batch = StatusBatchEnvelope.safeParse(body);
    if (batch.success) {
      for (const r of batch.data.records) out.push({ form: 'batch', record: StatusEvent.parse(r) });
    } else out.push({ form: 'single', record: StatusEvent.parse(body) });
  }
  return out;
}

async function recordsOf(ids: string[]): Promise<Map<string, Stored>> {
  let found = new Map<string, Stored>();
  await eventually(
    async () => {
      found = new Map((await storedRecords()).map((s) => [s.record.id, s]));
      return ids.every((id) => found.has(id));
    },
    `status records of ${ids.join(', ')} in ${STATUS_STREAM}`,
  );
  return found;
}

describe('status records of a --webhook-payload key (issue 39)', () => {
  it('carry the payload text on sent and pending, each in a message of its own; an unflagged key’s do not', async () => {
    const live = newRecipient();
    const edge = edgeStandIn(fx.peer, live);
    const payload = { title: 'Order 7 shipped', who: 'Zoë', n: [1, 2] };
    try {
      const sent = await request(fx.baseUrl, {
        body: notifyBody(live, { api_key: FLAGGED, payload }),
      });
      expect(sent.status).toBe(200);
      const queued = await request(fx.baseUrl, {
        body: notifyBody(newRecipient(), { api_key: FLAGGED, payload }),
      });
      expect(queued.status).toBe(202);
      const plain = await request(fx.baseUrl, {
        body: notifyBody(newRecipient(), { api_key: KEYS.mobile, payload }),
      });
      expect(plain.status).toBe(202);

      const records = await recordsOf([sent.json.id, queued.json.id, plain.json.id]);
      for (const [id, status] of [
        [sent.json.id, 'sent'],
        [queued.json.id, 'pending'],
      ]) {
        const stored = records.get(id);
        expect(stored?.form).toBe('single');
        expect(stored?.record).toMatchObject({ status, key_id: 'key-flagged' });
        // The sender's JSON text, as it crossed /notify.
        expect(JSON.parse(stored?.record.payload_json ?? 'null')).toEqual(payload);
      }
      const unflagged = records.get(plain.json.id)?.record;
      expect(unflagged).toMatchObject({ status: 'pending', key_id: 'key-mobile' });
      expect(unflagged && 'payload_json' in unflagged).toBe(false);
    } finally {
      edge.stop();
    }
  });

  it('in a batch, go one message each, never inside a StatusBatch; the unflagged key’s carry none', async () => {
    const batch = async (apiKey: string) => {
      const res = await request(fx.baseUrl, {
        path: '/notify/batch',
        body: {
          api_key: apiKey,
          client: 'mobile',
          events: [1, 2, 3].map((n) => ({ recipient: newRecipient(), payload: { n } })),
        },
      });
      expect(res.status).toBe(200);
      return (res.json.results as Array<{ id: string }>).map((r) => r.id);
    };
    const flaggedIds = await batch(FLAGGED);
    const plainIds = await batch(KEYS.mobile);
    const records = await recordsOf([...flaggedIds, ...plainIds]);
    flaggedIds.forEach((id, i) => {
      expect(records.get(id)?.form).toBe('single');
      expect(JSON.parse(records.get(id)?.record.payload_json ?? 'null')).toEqual({ n: i + 1 });
    });
    for (const id of plainIds) {
      expect(records.get(id)?.record.payload_json).toBeUndefined();
    }
    // Three records of one turn of one account: the unflagged key's share a StatusBatch.
    expect(plainIds.map((id) => records.get(id)?.form)).toContain('batch');
  });
});
