import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import {
  AckPolicy,
  type ConsumerConfig,
  type JetStreamManager,
  RetentionPolicy,
  StorageType,
} from 'nats';

/* What every NATS fact of bench/nats-facts.ts measures with. */

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export const rssKiB = (pid: number) =>
  Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
export const duKiB = (dir: string) =>
  Number(execFileSync('du', ['-sk', dir]).toString().split('\t')[0]);
export const quantile = (xs: number[], q: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))] ?? 0;
export const round = (x: number, digits = 3) => Number(x.toFixed(digits));

export async function stream(
  jsm: JetStreamManager,
  name: string,
  extra: Record<string, unknown> = {},
) {
  await jsm.streams.add({
    name,
    subjects: [`${name}.>`],
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    ...extra,
  });
}

export const pull = (name: string, filter: string, extra: Partial<ConsumerConfig> = {}) => ({
  durable_name: name,
  filter_subject: filter,
  ack_policy: AckPolicy.Explicit,
  ack_wait: 1_000_000_000,
  ...extra,
});
