import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import {
  eventually,
  type KeyObject,
  openSocket,
  post,
  REPO_ROOT,
  type SocketOptions,
  type Stack,
  type StackOptions,
  startStack,
  type TestSocket,
} from '@herald/testkit';
import { afterAll, beforeAll } from 'vitest';

/** Starts a whole stack for the test file and stops it afterwards. */
export function useStack(opts: StackOptions = {}): () => Stack {
  let stack: Stack | undefined;
  beforeAll(async () => {
    stack = await startStack(opts);
  });
  afterAll(async () => {
    await stack?.stop();
  });
  return () => {
    if (!stack) throw new Error('stack not started');
    return stack;
  };
}

export interface Tenant {
  account: string;
  key: KeyObject;
}

/** A fresh account with one mobile Test key. */
export async function newTenant(
  stack: Stack,
  client: 'web' | 'mobile' = 'mobile',
  domain?: string,
): Promise<Tenant> {
  const { id } = await stack.createAccount();
  const key = await stack.createKey({
    account: id,
    kind: 'test',
    client,
    ...(domain ? { domain } : {}),
  });
  return { account: id, key };
}

export const recipient = (): string => randomUUID();

/** A notify body as raw JSON text, with the payload's own text inserted verbatim. */
export function rawBody(opts: {
  recipient: string;
  apiKey: string;
  payloadJson: string;
  client?: string;
}): string {
  return `{"recipient":${JSON.stringify(opts.recipient)},"payload":${opts.payloadJson},"api_key":${JSON.stringify(opts.apiKey)},"client":${JSON.stringify(opts.client ?? 'mobile')}}`;
}

export function notify(
  stack: Stack,
  tenant: Tenant,
  to: string,
  payload: unknown,
  headers?: Record<string, string>,
) {
  return post(
    stack.baseUrl,
    stack.ca,
    { recipient: to, payload, api_key: tenant.key.key, client: tenant.key.client },
    headers ? { headers } : {},
  );
}

/** Opens a socket and waits until it is open (so the edge has subscribed the recipient). */
export async function connect(stack: Stack, opts: SocketOptions): Promise<TestSocket> {
  const s = openSocket(stack.wsUrl, stack.ca, opts);
  await s.opened;
  return s;
}

export { eventually };

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Retention's weekly run, one pass now (`run-once`, logged in as retention); its JSON summary. */
export async function runRetentionOnce(stack: Stack): Promise<Record<string, unknown>> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--conditions=herald-source', '--import', 'tsx', 'services/retention/src/main.ts', 'run-once'],
    {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH ?? '', ...stack.nats.env('retention'), LOG_LEVEL: 'warn' },
    },
  );
  return JSON.parse(stdout) as Record<string, unknown>;
}

/** Waits until the status of every one of `ids` is `delivered`, read through `/events/status`. */
export function allDelivered(stack: Stack, apiKey: string, ids: string[]): Promise<void> {
  return eventually(async () => {
    const res = await post(
      stack.baseUrl,
      stack.ca,
      { api_key: apiKey, ids },
      { path: '/events/status' },
    );
    return res.body.events?.every((e: { status: string }) => e.status === 'delivered') === true;
  }, `${ids.length} event(s) delivered`);
}
