/**
 * Re-measures, on the nats-server Herald pins, each NATS fact the code relies on (DESIGN.md
 * section 3 was measured on Debian's 2.9.10). Run: `npm run -s nats-facts -w @herald/bench`
 * (or `node --conditions=herald-source --import tsx bench/nats-facts.ts`). Prints one JSON
 * object; docs/architecture-history.md records the figures. Bounded: a private server on
 * loopback, a fixed number of operations, stops by itself.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { launchNats, natsServerBinary, stopProcess } from '@herald/testkit';
import { connect } from 'nats';
import {
  consumerCost,
  noResponders,
  publishRates,
  purgeCost,
  requestReply,
} from './src/nats-facts/costs.js';
import {
  consumePrefetch,
  discardNewPerSubject,
  inactiveThresholdReaps,
  msgIdDedup,
  perMessageTtl,
  purgeKeepsAckPending,
} from './src/nats-facts/semantics.js';

async function main(): Promise<void> {
  const { bin, version } = await natsServerBinary();
  const store = mkdtempSync(join(tmpdir(), 'herald-nats-facts-'));
  const portsDir = join(store, 'ports');
  mkdirSync(portsDir);
  const { proc, port } = await launchNats(bin, ['-js', '-sd', join(store, 'js')], { portsDir });
  const nc = await connect({ servers: `127.0.0.1:${port}`, noAsyncTraces: true });
  try {
    const jsm = await nc.jetstreamManager();
    const js = nc.jetstream();
    const pid = proc.pid as number;
    const facts = {
      nats_server: version,
      consumer_cost: await consumerCost(jsm, js, pid, join(store, 'js')),
      purge_below_ack_floor: await purgeKeepsAckPending(jsm, js),
      purge_cost: await purgeCost(jsm, js),
      inactive_threshold: await inactiveThresholdReaps(jsm, js),
      consume_prefetch: await consumePrefetch(jsm, js),
      no_responders: await noResponders(nc),
      request_reply: await requestReply(nc),
      discard_new_per_subject: await discardNewPerSubject(jsm, js),
      msg_id_dedup: await msgIdDedup(jsm, js),
      per_message_ttl: await perMessageTtl(jsm, js),
      jetstream_publish: await publishRates(js, jsm),
    };
    process.stdout.write(`${JSON.stringify(facts, null, 2)}\n`);
  } finally {
    await nc.close();
    await stopProcess(proc);
    rmSync(store, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`nats-facts failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
