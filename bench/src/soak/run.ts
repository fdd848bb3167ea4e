import { randomUUID } from 'node:crypto';
import { poster } from '../load/http-poster.js';
import { Churn } from './churn.js';
import { startComposeSoakStack } from './compose-stack.js';
import type { SoakConfig } from './config.js';
import { startDevSoakStack } from './dev-stack.js';
import { DeviceClient } from './device-client.js';
import { finish, type SoakResult } from './finish.js';
import { DeliveryLedger } from './ledger.js';
import { natsHoldings, recipientSubscriptions, subscriptionSubjects } from './leftovers.js';
import { Load } from './load.js';
import { startSampler } from './sampler.js';
import type { Restart } from './samples.js';

/** Recipients of each kind: devices held open, devices that visit, inbox devices. */
const CONNECTED = 16;
const AWAY = 8;
const INBOX = 4;
/** Devices of the push key: subscribed to Web Push, visiting in turn with the away ones. */
const PUSHED = 4;
/** Of the held devices, how many read slowly (their socket paused 2 s in every 10). */
const SLOW = 3;
/** An away device visits every VISIT_EVERY_MS, one at a time in turn, for VISIT_MS. */
const VISIT_EVERY_MS = 10_000;
const VISIT_MS = 4000;
/** Each inbox device asks for a history page (and marks its newest read) this often. */
const INBOX_ASK_MS = 5000;

const log = (msg: string) => process.stderr.write(`soak: ${msg}\n`);

/**
 * `make soak`: the whole stack under a steady mixed load for `cfg.minutes`, an edge restart and a
 * NATS restart at fixed points, every process sampled every `cfg.sampleMs`; then the end's checks
 * (finish.ts) and the results folder.
 */
export async function runSoak(cfg: SoakConfig): Promise<SoakResult> {
  const startedAt = new Date().toISOString();
  log(`starting the ${cfg.target} stack (results under ${cfg.resultsDir}/soak-…)`);
  const env = await (cfg.target === 'compose' ? startComposeSoakStack() : startDevSoakStack());
  const { nc, main, inbox, push } = env;
  const ledger = new DeliveryLedger();
  const http = poster(env.baseUrl, env.ca, 8);
  const device = (key: { apiKey: string }, slow: boolean) =>
    new DeviceClient({
      wsUrl: env.wsUrl,
      ca: env.ca,
      apiKey: key.apiKey,
      recipient: randomUUID(),
      device: `soak-${randomUUID().slice(0, 8)}`,
      ledger,
      ...(slow ? { slow: { pauseMs: 2000, everyMs: 10_000 } } : {}),
    });
  const connected = Array.from({ length: CONNECTED }, (_, i) => device(main, i < SLOW));
  const away = Array.from({ length: AWAY }, () => device(main, false));
  const inboxDevices = Array.from({ length: INBOX }, () => device(inbox, false));
  const pushDevices = Array.from({ length: PUSHED }, () => device(push, false));
  // Every device that visits: the main key's away ones and the push key's, in turn.
  const visitors = [...away, ...pushDevices];
  const timers: NodeJS.Timeout[] = [];
  try {
    // What nats-server holds with the stack idle and this process connected: the end's baseline.
    const baseline = await natsHoldings(env.monitorUrl);
    // Each push subscription's id (its endpoint's last segment) → its recipient.
    const pushSubscriptions = new Map<string, string>();
    for (const d of pushDevices) {
      const { endpoint } = await env.subscribePush(d.opts.recipient);
      pushSubscriptions.set(endpoint.slice(endpoint.lastIndexOf('/') + 1), d.opts.recipient);
    }
    for (const d of [...connected, ...inboxDevices]) d.hold();
    const load = new Load({
      http,
      nc,
      ledger,
      rate: cfg.rate,
      main,
      inbox,
      push,
      connected: connected.map((d) => d.opts.recipient),
      away: away.map((d) => d.opts.recipient),
      inboxRecipients: inboxDevices.map((d) => d.opts.recipient),
      pushRecipients: pushDevices.map((d) => d.opts.recipient),
    });
    const churn = new Churn({
      wsUrl: env.wsUrl,
      ca: env.ca,
      apiKey: main.apiKey,
      perSecond: cfg.churnPerS,
    });
    const t0 = Date.now();
    const sampler = startSampler(env.probes, cfg.sampleMs, t0);
    load.start();
    churn.start();
    let turn = 0;
    const visits = new Set<Promise<void>>();
    timers.push(
      setInterval(() => {
        const v = visitors[turn++ % visitors.length]?.visit(VISIT_MS);
        if (v) visits.add(v.finally(() => visits.delete(v)));
      }, VISIT_EVERY_MS),
      setInterval(() => {
        for (const d of inboxDevices) d.askInbox();
      }, INBOX_ASK_MS),
    );
    const restarts: Restart[] = [];
    const at = async (ms: number) => {
      const left = t0 + ms - Date.now();
      if (left > 0) await new Promise((r) => setTimeout(r, left));
    };
    await at(cfg.edgeRestartAtMs);
    restarts.push({ t: (Date.now() - t0) / 1000, process: 'socket-edge' });
    log(`restarting socket-edge at ${restarts.at(-1)?.t.toFixed(0)} s`);
    await env.restart('socket-edge');
    await at(cfg.natsRestartAtMs);
    restarts.push({ t: (Date.now() - t0) / 1000, process: 'nats-server' });
    log(`restarting nats-server at ${restarts.at(-1)?.t.toFixed(0)} s`);
    await env.restart('nats-server');
    await at(cfg.minutes * 60_000);
    // The recipient subscriptions while the devices are held: what the end's check must see go.
    const recipients = new Set(
      [...connected, ...visitors, ...inboxDevices].map((d) => d.opts.recipient),
    );
    const heldSubs = recipientSubscriptions(await subscriptionSubjects(env.monitorUrl), recipients);
    log(
      `load stopped after ${((Date.now() - t0) / 1000).toFixed(0)} s; ${ledger.counts().accepted} events accepted`,
    );
    for (const t of timers) clearInterval(t);
    await Promise.all([load.stop(), churn.stop(), ...visits]);
    return await finish({
      cfg,
      startedAt,
      t0,
      env,
      ledger,
      sampler,
      baseline,
      restarts,
      devices: { held: [...connected, ...inboxDevices], away: visitors },
      pushSubscriptions,
      churned: churn.recipients,
      notes: [
        `Target: ${env.describe}.`,
        `Load: ${cfg.rate} events/s offered (live and queued POST /notify, /notify/batch of 5, rt.dispatch, an inbox key, a push key); ${load.skipped} requests skipped at 64 in flight.`,
        `Devices: ${CONNECTED} held open (${SLOW} slow readers), ${AWAY} of the main key and ${PUSHED} of the push key (subscribed to Web Push) visiting ${VISIT_MS / 1000} s in turn every ${VISIT_EVERY_MS / 1000} s, ${INBOX} of the inbox key asking for history and marking read every ${INBOX_ASK_MS / 1000} s.`,
        `Subscriptions naming a device's recipient just before the load stopped: ${heldSubs.length} (the end's check sees them go).`,
        `Churn: ${JSON.stringify(churn.counts)} (${cfg.churnPerS}/s: readers, silent, slow readers; every third dropped).`,
      ],
    });
  } finally {
    for (const t of timers) clearInterval(t);
    await Promise.all([...connected, ...visitors, ...inboxDevices].map((d) => d.release()));
    await http.close();
    await env.stop();
  }
}
