/**
 * Measures the accuracy of the dispatch rate limit with two ingress instances sharing one NATS:
 * senders hammer one key through both instances for a few seconds and the accepted count is set
 * beside the ideal single-bucket figure, burst + rate × T. Not a test (no assertions): the
 * figures in docs/operations.md come from it.
 *
 *   node --conditions=herald-source --import tsx services/ingress-api/test/measure/rate-accuracy.ts
 */
import { randomUUID } from 'node:crypto';
import { createLogger, serve } from '@herald/kit';
import { connect } from 'nats';
import { createIngress } from '../../src/index.js';
import { answerFor, key, ROOMY_LIMITS } from '../support/auth-responder.js';
import { newRecipient, notifyBody, startIngressFixture, testConfig } from '../support/fixture.js';
import { request } from '../support/http.js';

const SECONDS = Number(process.env.SECONDS ?? 4);

const fx = await startIngressFixture();
const nc2 = await connect(fx.nats.connectOptions());
const config = testConfig(fx.nats);
const second = await serve(
  createIngress(config, { nc: nc2, logger: createLogger('ingress-api', 'silent') }),
  config,
  0,
);
const urls = [fx.baseUrl, `http://127.0.0.1:${second.port}`];

/** `split`: the share of senders on the first instance. */
async function run(rate: number, burst: number, senders: number, split: number) {
  const apiKey = `hk_live_${randomUUID()}`;
  answerFor(
    apiKey,
    key(randomUUID(), { limits: { ...ROOMY_LIMITS, dispatch_rate: rate, dispatch_burst: burst } }),
  );
  let ok = 0;
  let sent = 0;
  const started = performance.now();
  const deadline = started + SECONDS * 1000;
  const onFirst = Math.round(senders * split);
  await Promise.all(
    Array.from({ length: senders }, async (_, n) => {
      const url = n < onFirst ? urls[0] : urls[1];
      while (performance.now() < deadline) {
        const r = await request(url as string, {
          body: notifyBody(newRecipient(), { api_key: apiKey }),
        });
        sent++;
        if (r.status === 200 || r.status === 202) ok++;
      }
    }),
  );
  const t = (performance.now() - started) / 1000;
  const ideal = burst + rate * t;
  console.log(
    `rate ${rate}/s burst ${burst}, ${senders} senders (${onFirst} on instance 1), ${t.toFixed(2)} s, ${sent} sent: accepted ${ok}, ideal ${ideal.toFixed(1)} (${((100 * ok) / ideal).toFixed(1)} %)`,
  );
}

for (const [rate, burst] of [
  [10, 20],
  [50, 100],
  [200, 400],
] as const) {
  await run(rate, burst, 8, 0.5);
  await run(rate, burst, 8, 0.125);
}
await second.close();
await nc2.close();
await fx.stop();
