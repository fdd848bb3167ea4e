import { randomUUID } from 'node:crypto';
import { Herald, type HeraldOptions } from '@herald/sdk';
import { type KeyObject, type Stack, startStack } from '@herald/testkit';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { tlsRuntime } from './tls-runtime.js';

export type Runtime = ReturnType<typeof tlsRuntime>;

export interface SdkStack {
  stack: Stack;
  account: string;
  /** A mobile Test key of `account`. */
  key: KeyObject;
  /** A Test key of a fresh account (an account has one Test key). */
  newKey(opts?: {
    client?: 'web' | 'mobile';
    domain?: string;
    requireToken?: boolean;
  }): Promise<KeyObject>;
  /** A revoked mobile Test key, made once per file (each admin call costs a process start). */
  revokedKey(): Promise<KeyObject>;
  /** A runtime trusting the stack's CA; closed after each test. */
  runtime(): Runtime;
  /** A Herald on the stack (mobile key, quick backoff); disconnected after each test. */
  herald(opts?: Partial<HeraldOptions>, rt?: Runtime): Herald;
}

/** Limits set low so their edges are cheap to reach. */
export const QUEUE_MAX_PER_RECIPIENT = 5;

/**
 * One real stack (nats-server, Postgres, auth, ingress-api, socket-edge over TLS) for the whole
 * file: starting one costs seconds, so every SDK scenario shares it.
 */
export function useSdkStack(): () => SdkStack {
  let ctx: SdkStack | undefined;
  const heralds: Herald[] = [];
  const runtimes: Runtime[] = [];
  beforeAll(async () => {
    const stack = await startStack({
      env: {
        // A short publish timeout keeps the NATS-down test (503) quick.
        'ingress-api': {
          QUEUE_MAX_PER_RECIPIENT: String(QUEUE_MAX_PER_RECIPIENT),
          PUBLISH_TIMEOUT_MS: '2000',
        },
        // A killed edge cannot nak what it held: keep the redelivery wait short. No clock skew on
        // recipient tokens, so a token lapses when its exp says.
        'socket-edge': { ACK_WAIT_MS: '1000', TOKEN_CLOCK_SKEW_MS: '0' },
      },
    });
    const { id: account } = await stack.createAccount();
    const key = await stack.createKey({ account, kind: 'test', client: 'mobile' });
    const runtime = () => {
      const rt = tlsRuntime(stack.ca);
      runtimes.push(rt);
      return rt;
    };
    const newKey: SdkStack['newKey'] = async (o = {}) => {
      const { id } = await stack.createAccount();
      return stack.createKey({
        account: id,
        kind: 'test',
        client: o.client ?? 'mobile',
        ...(o.domain ? { domain: o.domain } : {}),
        ...(o.requireToken ? { requireToken: true } : {}),
      });
    };
    let revoked: Promise<KeyObject> | undefined;
    ctx = {
      stack,
      account,
      key,
      runtime,
      newKey,
      revokedKey() {
        revoked ??= newKey().then(async (k) => {
          await stack.revokeKey(k.id);
          return k;
        });
        return revoked;
      },
      herald(opts = {}, rt = runtime()) {
        const h = new Herald({
          apiKey: key.key,
          client: 'mobile',
          baseUrl: stack.baseUrl,
          wsUrl: stack.wsUrl,
          WebSocket: rt.WebSocket,
          fetch: rt.fetch,
          backoff: { baseMs: 50, capMs: 400 },
          ...opts,
        });
        heralds.push(h);
        return h;
      },
    };
  });
  afterEach(async () => {
    for (const h of heralds.splice(0)) h.disconnect();
    await Promise.all(runtimes.splice(0).map((rt) => rt.close()));
  });
  afterAll(async () => {
    await ctx?.stack.stop();
  });
  return () => {
    if (!ctx) throw new Error('stack not started');
    return ctx;
  };
}

export const recipient = (): string => randomUUID();

/** Polls until `predicate` holds; fails with `what` after timeoutMs. */
export async function eventually(
  predicate: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
