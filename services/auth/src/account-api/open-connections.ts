import { CONNECTIONS_BUCKET } from '@herald/proto';
import type { KV, NatsConnection } from 'nats';

/**
 * The account's open sockets now, from the edges' shared counts (one KV entry per pool and edge,
 * `<pool>.<edge>`; the Test key's pool is `<account>.test`, the Live keys' `<account>`). Counts a
 * crashed edge left behind expire with the bucket's TTL. Zero when no edge has written yet.
 */
export async function openConnections(
  nc: NatsConnection,
  account: string,
): Promise<{ live: number; test: number }> {
  let kv: KV;
  try {
    kv = await nc.jetstream().views.kv(CONNECTIONS_BUCKET, { bindOnly: true });
  } catch {
    return { live: 0, test: 0 };
  }
  const sum = async (pool: string) => {
    let total = 0;
    const keys = await kv.keys(`${pool}.*`);
    for await (const k of keys) {
      // `<account>.*` matches one token after the account, so never the test pool's 3-token keys.
      const entry = await kv.get(k);
      if (entry && entry.operation === 'PUT') total += Number(entry.string()) || 0;
    }
    return total;
  };
  try {
    const [live, test] = await Promise.all([sum(account), sum(`${account}.test`)]);
    return { live, test };
  } catch {
    return { live: 0, test: 0 };
  }
}
