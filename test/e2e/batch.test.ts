import { randomUUID } from 'node:crypto';
import { BatchReply, DispatchStatus, subjects } from '@herald/proto';
import { post, type Stack, TEST_PLANS } from '@herald/testkit';
import { type NatsConnection, connect as natsConnect, headers as natsHeaders } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, eventually, newTenant, recipient, type Tenant, useStack } from './fixtures.js';

const MAX_EVENTS = 5;
const MAX_BYTES = 4096;
const PAYLOAD_LIMIT = 256;
/** Test keys get a small burst and almost no refill, so a batch meets the rate limit on purpose. */
const TEST_KEY_BURST = 4;

interface Answer {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: assertions read the body field by field and fail on a wrong shape.
  body: any;
  retryAfter: string | undefined;
}

/**
 * Batch dispatch on the whole stack (auth, ingress, edge, status; real nats-server and Postgres),
 * over both transports: every case runs once over HTTP and once over `rt.dispatch.batch.<account>`.
 * With `BATCH_LIVE=grouped` (the default) every case runs; with `per_event` the live push is the
 * only part that differs, so only the live, queued and mixed recipients case runs there.
 */
batchSuite('grouped', 'every case');
batchSuite('per_event', 'the live case');

function batchSuite(mode: 'grouped' | 'per_event', cases: 'every case' | 'the live case') {
  describe(`batch dispatch (BATCH_LIVE=${mode})`, () => {
    const stack = useStack({
      services: ['auth', 'ingress-api', 'socket-edge', 'status'],
      plans: {
        ...TEST_PLANS,
        test_key_limits: {
          ...TEST_PLANS.test_key_limits,
          dispatch_rate: 0.001,
          dispatch_burst: TEST_KEY_BURST,
        },
      },
      env: {
        'ingress-api': {
          BATCH_MAX_EVENTS: String(MAX_EVENTS),
          BATCH_MAX_BYTES: String(MAX_BYTES),
          PAYLOAD_LIMIT_BYTES: String(PAYLOAD_LIMIT),
          BATCH_LIVE: mode,
        },
      },
    });
    let nc: NatsConnection;
    beforeAll(async () => {
      nc = await natsConnect(stack().nats.connectOptions());
    });
    afterAll(async () => {
      await nc?.close();
    });

    const transports: Array<
      [string, (t: Tenant, raw: string, h?: Record<string, string>) => Promise<Answer>]
    > = [
      [
        'HTTP',
        async (_t, raw, h = {}) => {
          const res = await post(stack().baseUrl, stack().ca, undefined, {
            raw,
            path: '/notify/batch',
            headers: h,
          });
          const retry = res.headers['retry-after'];
          return { status: res.status, body: res.body, retryAfter: retry as string | undefined };
        },
      ],
      [
        'NATS',
        async (t, raw, h = {}) => {
          const hdrs = natsHeaders();
          for (const [name, value] of Object.entries(h)) hdrs.set(name, value);
          const msg = await nc.request(subjects.dispatchBatch(t.account), raw, {
            timeout: 15_000,
            headers: hdrs,
          });
          const reply = JSON.parse(new TextDecoder().decode(msg.data));
          expect(BatchReply.safeParse(reply).success).toBe(true);
          const { http_status, ...body } = reply;
          return {
            status: http_status,
            body,
            retryAfter: msg.headers?.get('Retry-After') || undefined,
          };
        },
      ],
    ];

    /** A tenant on a paid plan with a Live key: the catalogue's high limits. */
    async function liveTenant(s: Stack): Promise<Tenant> {
      const { id } = await s.createAccount({ plan: 'hobby' });
      const key = await s.createKey({ account: id, kind: 'live', client: 'mobile' });
      return { account: id, key };
    }

    const batchOf = (t: Tenant, events: unknown[], extra: Record<string, unknown> = {}) =>
      JSON.stringify({ api_key: t.key.key, client: t.key.client, events, ...extra });

    const statusesOf = async (t: Tenant, ids: string[]): Promise<string[]> => {
      const res = await post(
        stack().baseUrl,
        stack().ca,
        { api_key: t.key.key, ids },
        { path: '/events/status' },
      );
      expect(res.status).toBe(200);
      return res.body.events.map((e: { status: string }) => e.status);
    };

    describe.each(transports)('over %s', (_name, send) => {
      if (cases === 'every case') {
        it('all good: one queued result per event, in order, each stored and delivered on connect', async () => {
          const s = stack();
          const t = await liveTenant(s);
          const to = [recipient(), recipient(), recipient()];
          const res = await send(
            t,
            batchOf(
              t,
              to.map((r, i) => ({ recipient: r, payload: { n: i } })),
            ),
          );
          expect(res.status).toBe(200);
          expect(res.body.results).toEqual(
            to.map(() => ({
              status: DispatchStatus.queued,
              id: expect.any(String),
              http_status: 202,
            })),
          );
          const ids = res.body.results.map((r: { id: string }) => r.id);
          expect(new Set(ids).size).toBe(3);
          for (const [i, r] of to.entries()) {
            const sock = await connect(s, { apiKey: t.key.key, recipient: r, v1: true });
            const [frame] = await sock.waitForFrames(1);
            expect(frame?.envelope).toMatchObject({ type: 'event', id: ids[i], payload: { n: i } });
            await sock.close();
          }
        });

        it('mixed good and bad: each bad event fails alone with the single dispatch error, the rest are queued', async () => {
          const s = stack();
          const t = await liveTenant(s);
          const [a, b] = [recipient(), recipient()];
          const events = [
            { recipient: a, payload: { ok: 1 } },
            { recipient: 'not-a-uuid', payload: 1 },
            { recipient: b },
            'not an event',
            { recipient: b, payload: 'x'.repeat(PAYLOAD_LIMIT) },
            { recipient: b, payload: { ok: 2 } },
          ];
          // MAX_EVENTS is 5: this case needs six, so it goes as one batch of five plus the last alone.
          const res = await send(t, batchOf(t, events.slice(0, MAX_EVENTS)));
          const last = await send(t, batchOf(t, events.slice(MAX_EVENTS)));
          expect(res.status).toBe(200);
          const results = [...res.body.results, ...last.body.results];
          expect(results.map((r: { http_status: number }) => r.http_status)).toEqual([
            202, 400, 400, 400, 413, 202,
          ]);
          for (const index of [1, 2, 4]) {
            const single = await post(s.baseUrl, s.ca, {
              ...(events[index] as object),
              api_key: t.key.key,
              client: t.key.client,
            });
            expect(results[index]).toEqual({ ...single.body, http_status: single.status });
          }
          expect(results[3]).toEqual({
            error: { code: 'invalid_field', message: expect.any(String), field: 'events[3]' },
            http_status: 400,
          });
          expect(results[0]).toMatchObject({ status: DispatchStatus.queued });
          expect(results[5]).toMatchObject({ status: DispatchStatus.queued });
        });

        const refusals: Array<[string, (t: Tenant) => string, number, string]> = [
          [
            'unknown key',
            (t) =>
              batchOf(t, [{ recipient: recipient(), payload: 1 }], { api_key: 'hk_test_nope' }),
            401,
            'invalid_api_key',
          ],
          [
            'bad client',
            (t) => batchOf(t, [{ recipient: recipient(), payload: 1 }], { client: 'tv' }),
            400,
            'invalid_client',
          ],
          ['not JSON', () => '{"events": [', 400, 'invalid_json'],
          [
            'no events',
            (t) => JSON.stringify({ api_key: t.key.key, client: t.key.client }),
            400,
            'missing_field',
          ],
          ['empty events', (t) => batchOf(t, []), 400, 'invalid_field'],
          [
            'one event over BATCH_MAX_EVENTS',
            (t) =>
              batchOf(
                t,
                Array.from({ length: MAX_EVENTS + 1 }, () => ({
                  recipient: recipient(),
                  payload: 1,
                })),
              ),
            413,
            'payload_too_large',
          ],
        ];
        it.each(refusals)('whole request refused: %s', async (_case, build, status, code) => {
          const t = await liveTenant(stack());
          const res = await send(t, build(t));
          expect(res.status).toBe(status);
          expect(res.body).toEqual({
            error: { code, message: expect.any(String), field: expect.any(String) },
          });
        });

        it('exactly BATCH_MAX_EVENTS events pass', async () => {
          const t = await liveTenant(stack());
          const events = Array.from({ length: MAX_EVENTS }, (_, n) => ({
            recipient: recipient(),
            payload: { n },
          }));
          const res = await send(t, batchOf(t, events));
          expect(res.status).toBe(200);
          expect(res.body.results).toHaveLength(MAX_EVENTS);
        });

        it('exactly BATCH_MAX_BYTES passes, one byte more is refused whole (413)', async () => {
          const t = await liveTenant(stack());
          const json = batchOf(t, [{ recipient: recipient(), payload: { edge: true } }]);
          const exact = json + ' '.repeat(MAX_BYTES - Buffer.byteLength(json));
          expect(Buffer.byteLength(exact)).toBe(MAX_BYTES);
          const ok = await send(t, exact);
          expect(ok.status).toBe(200);
          expect(ok.body.results).toEqual([
            { status: DispatchStatus.queued, id: expect.any(String), http_status: 202 },
          ]);
          const over = await send(t, `${exact} `);
          expect(over.status).toBe(413);
          expect(over.body.error).toMatchObject({ code: 'payload_too_large', field: 'body' });
        });

        it('Idempotency-Key covers the batch: same body, same results and stored once; another body, 422', async () => {
          const s = stack();
          const t = await liveTenant(s);
          const to = recipient();
          const key = { 'Idempotency-Key': randomUUID() };
          const raw = batchOf(t, [
            { recipient: to, payload: { n: 1 } },
            { recipient: to, payload: { n: 2 } },
          ]);
          const first = await send(t, raw, key);
          const again = await send(t, raw, key);
          expect(first.status).toBe(200);
          expect(again).toEqual(first);
          const other = await send(t, batchOf(t, [{ recipient: to, payload: { n: 3 } }]), key);
          expect(other.status).toBe(422);
          expect(other.body.error).toMatchObject({
            code: 'idempotency_key_reused',
            field: 'Idempotency-Key',
          });

          // Stored once: the two events come, in order, then a marker sent afterwards, nothing between.
          const sock = await connect(s, { apiKey: t.key.key, recipient: to, v1: true });
          await sock.waitForFrames(2);
          const marker = await post(s.baseUrl, s.ca, {
            recipient: to,
            payload: 'marker',
            api_key: t.key.key,
            client: 'mobile',
          });
          expect(marker.status).toBe(200);
          const frames = await sock.waitForFrames(3);
          expect(frames.map((f) => f.envelope?.payload)).toEqual([{ n: 1 }, { n: 2 }, 'marker']);
          expect(frames.slice(0, 2).map((f) => f.envelope?.id)).toEqual(
            first.body.results.map((r: { id: string }) => r.id),
          );
          await sock.close();
        });

        it('the rate limit counts events: past the burst an event fails alone, then the batch is refused', async () => {
          const s = stack();
          const t = await newTenant(s); // a Test key: burst TEST_KEY_BURST, almost no refill
          const events = Array.from({ length: TEST_KEY_BURST + 1 }, (_, n) => ({
            recipient: recipient(),
            payload: { n },
          }));
          const res = await send(t, batchOf(t, events));
          expect(res.status).toBe(200);
          const statuses = res.body.results.map((r: { http_status: number }) => r.http_status);
          expect(statuses).toEqual([...Array(TEST_KEY_BURST).fill(202), 403]);
          expect(res.body.results[TEST_KEY_BURST].error).toMatchObject({
            code: 'rate_limited',
            field: 'api_key',
          });
          const next = await send(t, batchOf(t, events.slice(0, 1)));
          expect(next.status).toBe(403);
          expect(next.body.error).toMatchObject({ code: 'rate_limited' });
          expect(Number(next.retryAfter)).toBeGreaterThan(0);
        });
      }

      it('live, queued and mixed recipients each get the right status, their events in order, and status records', async () => {
        const s = stack();
        const t = await liveTenant(s);
        const [plain, v1, offline] = [recipient(), recipient(), recipient()];
        const plainSock = await connect(s, { apiKey: t.key.key, recipient: plain });
        const v1Sock = await connect(s, { apiKey: t.key.key, recipient: v1, v1: true });
        const events = [
          { recipient: plain, payload: { to: 'plain', n: 1 } },
          { recipient: offline, payload: { to: 'offline', n: 1 } },
          { recipient: v1, payload: { to: 'v1', n: 1 } },
          { recipient: plain, payload: { to: 'plain', n: 2 } },
          { recipient: offline, payload: { to: 'offline', n: 2 } },
        ];
        const res = await send(t, batchOf(t, events));
        expect(res.status).toBe(200);
        const { results } = res.body;
        expect(results.map((r: { status: string }) => r.status)).toEqual([
          DispatchStatus.sent,
          DispatchStatus.queued,
          DispatchStatus.sent,
          DispatchStatus.sent,
          DispatchStatus.queued,
        ]);
        const ids: string[] = results.map((r: { id: string }) => r.id);

        const plainFrames = await plainSock.waitForFrames(2);
        expect(plainFrames.map((f) => JSON.parse(f.text))).toEqual([
          events[0]?.payload,
          events[3]?.payload,
        ]);
        const [v1Frame] = await v1Sock.waitForFrames(1);
        expect(v1Frame?.envelope).toMatchObject({ id: ids[2], payload: events[2]?.payload });
        const later = await connect(s, { apiKey: t.key.key, recipient: offline, v1: true });
        const queued = await later.waitForFrames(2);
        expect(queued.map((f) => [f.envelope?.id, f.envelope?.payload])).toEqual([
          [ids[1], events[1]?.payload],
          [ids[4], events[4]?.payload],
        ]);

        // Every event of the batch has its own status record.
        await eventually(
          async () => (await statusesOf(t, ids)).every((st) => st !== 'unknown'),
          'status records of every event',
          20_000,
        );
        const statuses = await statusesOf(t, ids);
        for (const i of [0, 2, 3]) expect(['sent', 'delivered']).toContain(statuses[i]);
        for (const i of [1, 4]) expect(['pending', 'delivered']).toContain(statuses[i]);
        await Promise.all([plainSock.close(), v1Sock.close(), later.close()]);
      });
    });
  });
}
