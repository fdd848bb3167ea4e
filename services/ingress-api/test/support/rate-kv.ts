import type { VerifiedKey } from '@herald/proto';
import type { KV } from 'nats';
import { key, ROOMY_LIMITS } from './auth-responder.js';

/** A key of its own with this dispatch rate and burst, the other limits roomy. */
export function rateKey(dispatch_rate: number, dispatch_burst: number): VerifiedKey {
  return key(`key-${crypto.randomUUID()}`, {
    limits: { ...ROOMY_LIMITS, dispatch_rate, dispatch_burst },
  });
}

/** The KV's view through a gate: while closed, every read of the shared state waits for it. */
export function gatedKv(kv: KV) {
  let open: Promise<void> = Promise.resolve();
  let release = () => {};
  const gated = new Proxy(kv, {
    get(target, prop, receiver) {
      if (prop === 'get') {
        return async (k: string) => {
          await open;
          return target.get(k);
        };
      }
      const value = Reflect.get(target, prop, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return {
    kv: async () => gated,
    close() {
      open = new Promise((r) => {
        release = r;
      });
    },
    open: () => release(),
  };
}
