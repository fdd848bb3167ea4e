import { type NatsServer, startNatsServer } from '@herald/testkit';

/**
 * A private nats-server whose JetStream may store at most `maxFileStore` bytes: the store-wide
 * byte bound that refuses publishes (10023) instead of trimming old events, which a file-store
 * stream's own max_bytes does on servers < 2.10.5.
 */
export function startNatsWithStoreLimit(maxFileStore: number): Promise<NatsServer> {
  return startNatsServer({ maxFileStore });
}
