import type { ComposeStack } from '@herald/testkit/compose';
import { run } from '@herald/testkit/compose';

// The faults of the cluster test, done to the running containers with the docker CLI, and what
// the test reads from the NATS nodes' monitoring port (inside their containers: it stays private).

export const NATS_NODES = ['nats-1', 'nats-2', 'nats-3'] as const;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

async function ok(what: string, res: { code: number; stdout: string; stderr: string }) {
  if (res.code !== 0) throw new Error(`${what} failed (${res.code}): ${res.stderr || res.stdout}`);
  return res.stdout;
}

export async function containerOf(stack: ComposeStack, service: string): Promise<string> {
  const c = (await stack.containers()).find((c) => c.service === service);
  if (!c) throw new Error(`no container for ${service}`);
  return c.name;
}

/** GET on a NATS node's monitoring port, from inside its container. */
export async function natsMonitor(
  stack: ComposeStack,
  node: string,
  path: string,
): Promise<{ ok: boolean; body: string }> {
  const name = await containerOf(stack, node);
  const res = await run(
    'docker',
    ['exec', name, 'wget', '-q', '-O', '-', `http://127.0.0.1:8222${path}`],
    20_000,
  );
  return { ok: res.code === 0, body: res.stdout };
}

interface JszStream {
  name: string;
  config?: { num_replicas?: number };
  cluster?: { leader?: string; replicas?: Array<{ name: string; current: boolean }> };
}

/** Every stream (name, replicas, leader) as one node reports it. */
export async function streams(stack: ComposeStack, node: string): Promise<JszStream[]> {
  const res = await natsMonitor(stack, node, '/jsz?accounts=true&streams=true&config=true');
  if (!res.ok) throw new Error(`${node} /jsz did not answer`);
  const jsz = JSON.parse(res.body) as {
    account_details?: Array<{ stream_detail?: JszStream[] }>;
  };
  return (jsz.account_details ?? []).flatMap((a) => a.stream_detail ?? []);
}

/** The compose service of the node that leads the most queue partition streams. */
export async function queueLeader(stack: ComposeStack): Promise<string> {
  const counts = new Map<string, number>();
  for (const s of await streams(stack, 'nats-1'))
    if (s.name.startsWith('HERALD_QUEUE_') && s.cluster?.leader)
      counts.set(s.cluster.leader, (counts.get(s.cluster.leader) ?? 0) + 1);
  const [leader] = [...counts.entries()].sort((a, b) => b[1] - a[1])[0] ?? [];
  if (!leader) throw new Error('no queue stream reports a leader');
  // server_name herald-nats-N runs as compose service nats-N.
  return leader.replace(/^herald-/, '');
}

/** A service's /metrics text, read on its private ops listener from inside its container. */
export async function metricsText(stack: ComposeStack, service: string): Promise<string> {
  const script =
    "fetch('http://127.0.0.1:'+process.env.OPS_PORT+'/metrics').then(r=>r.text()).then(t=>console.log(t))";
  const res = await run('docker', [
    'exec',
    await containerOf(stack, service),
    'node',
    '-e',
    script,
  ]);
  return ok(`${service} /metrics`, res);
}

/**
 * The sum of the samples in a /metrics text whose line starts with `series`: a name, or a name
 * and its first labels (`herald_webhook_attempts_total{result="success"`, open: every sample
 * also carries the service's default label).
 */
export function sumSeries(text: string, series: string): number {
  return text
    .split('\n')
    .filter((l) => l.startsWith(series))
    .reduce((sum, l) => sum + Number(l.split(' ').at(-1)), 0);
}

/** Sockets open on an edge (its herald_open_sockets gauge). */
export const openSockets = async (stack: ComposeStack, edge: string): Promise<number> =>
  sumSeries(await metricsText(stack, edge), 'herald_open_sockets');

/** Settled: every NATS node's full /healthz answers ok (JetStream caught up), every container healthy. */
export async function settle(stack: ComposeStack, limitMs: number): Promise<number> {
  const started = Date.now();
  for (;;) {
    const healthy = await Promise.all(
      NATS_NODES.map(async (n) => (await natsMonitor(stack, n, '/healthz')).ok),
    );
    if (healthy.every(Boolean)) break;
    if (Date.now() - started > limitMs)
      throw new Error(`NATS not healthy within ${limitMs} ms: ${healthy.join(', ')}`);
    await sleep(1000);
  }
  await stack.waitHealthy(Math.max(1000, limitMs - (Date.now() - started)));
  return Date.now() - started;
}

export async function kill(stack: ComposeStack, service: string): Promise<void> {
  await ok(
    `docker kill ${service}`,
    await run('docker', ['kill', await containerOf(stack, service)]),
  );
}

export async function start(stack: ComposeStack, service: string): Promise<void> {
  await ok(
    `docker start ${service}`,
    await run('docker', ['start', await containerOf(stack, service)]),
  );
}

/** `docker restart` (SIGTERM, then a start): a graceful restart, as a rolling upgrade does. */
export async function restart(stack: ComposeStack, service: string): Promise<void> {
  await ok(
    `docker restart ${service}`,
    await run('docker', ['restart', '--time', '45', await containerOf(stack, service)]),
  );
}

/** Cuts `service` off the backend network for `ms`, then puts it back under its own names. */
export async function partition(stack: ComposeStack, service: string, ms: number): Promise<void> {
  const name = await containerOf(stack, service);
  const network = `${stack.project}_backend`;
  await ok(
    'docker network disconnect',
    await run('docker', ['network', 'disconnect', network, name]),
  );
  await sleep(ms);
  await ok(
    'docker network connect',
    await run('docker', ['network', 'connect', '--alias', service, network, name]),
  );
}
