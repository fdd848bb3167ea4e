import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, type TestCerts } from '@herald/testkit';
import { type NodeProcess, startServerProcess } from './node-process.js';
import type { Pinning } from './pinning.js';
import type { NamedProcess } from './process-cpu.js';
import { type RedisServer, startRedis } from './redis-server.js';

export type CentrifugoEngine = 'memory' | 'redis';

/** The namespace of every recipient's personal channel, `personal:#<recipient>`. */
export const PERSONAL_NAMESPACE = 'personal';

export interface CentrifugoServer {
  engine: CentrifugoEngine;
  /** The name of its process, for CPU accounting and the report. */
  name: string;
  process: NodeProcess;
  /** Every server process it needs (itself, and its redis-server for the Redis engine). */
  processes: NamedProcess[];
  /** https://127.0.0.1:port, where its server API answers. */
  origin: string;
  /** wss://127.0.0.1:port/connection/websocket, its bidirectional WebSocket endpoint. */
  wsUrl: string;
  /** redis://127.0.0.1:port of its own redis-server (Redis engine only). */
  redisUrl?: string;
  /** The server API key (`X-API-Key`). */
  apiKey: string;
  /** The HMAC secret its connection JWTs (HS256) are signed with. */
  tokenSecret: string;
  pinned: string[];
  stop(): Promise<void>;
}

export interface CentrifugoOptions {
  bin: string;
  engine: CentrifugoEngine;
  pinning: Pinning;
  certs: TestCerts;
  /** Publications each personal channel keeps for recovery: the deepest queue a figure drains. */
  historySize: number;
  /** Bytes of one publication as sent (payload plus its JSON frame), to size the client queue. */
  publicationBytes: number;
}

/** The process name of a Centrifugo of the given engine, in every table. */
export const centrifugoName = (engine: CentrifugoEngine) => `centrifugo (${engine})`;

/**
 * The Centrifugo configuration for Herald's job (docs/benchmarks.md, "Centrifugo"): connection
 * JWTs (HS256) whose `sub` is the recipient, each connection subscribed by the server to its
 * personal channel; history and forced recovery on that namespace, so events published while the
 * recipient is away are replayed when it connects with `recover`; the recovery and client-queue
 * limits raised to the deepest backlog a figure drains; the server API behind a key; TLS with the
 * certificate Herald's services use; loopback only; no usage statistics (these machines have no
 * network). Everything else is Centrifugo's default.
 */
export function centrifugoConfig(
  opts: Pick<CentrifugoOptions, 'engine' | 'certs' | 'historySize' | 'publicationBytes'> & {
    port: number;
    apiKey: string;
    tokenSecret: string;
    redisUrl?: string;
  },
): Record<string, unknown> {
  const backlogBytes = opts.historySize * opts.publicationBytes;
  return {
    http_server: {
      address: '127.0.0.1',
      port: opts.port,
      tls: { enabled: true, cert_pem: opts.certs.certFile, key_pem: opts.certs.keyFile },
    },
    log: { level: 'warn' },
    engine:
      opts.engine === 'redis'
        ? { type: 'redis', redis: { address: [opts.redisUrl] } }
        : { type: 'memory' },
    client: {
      token: { hmac_secret_key: opts.tokenSecret },
      subscribe_to_user_personal_channel: {
        enabled: true,
        personal_channel_namespace: PERSONAL_NAMESPACE,
      },
      // Defaults 300 publications and 1 MiB: a deep backlog would not be replayed in one connect.
      recovery_max_publication_limit: Math.max(300, opts.historySize),
      queue_max_size: Math.max(1024 * 1024, 2 * backlogBytes),
    },
    channel: {
      namespaces: [
        {
          name: PERSONAL_NAMESPACE,
          history_size: opts.historySize,
          // Longer than any run: the figures store and drain within seconds of each other.
          history_ttl: '1h',
          force_recovery: true,
        },
      ],
    },
    http_api: { key: opts.apiKey },
    health: { enabled: true },
    usage_stats: { disabled: true },
  };
}

/** Starts Centrifugo (and, for the Redis engine, a redis-server of its own) on the server CPUs. */
export async function startCentrifugo(opts: CentrifugoOptions): Promise<CentrifugoServer> {
  const name = centrifugoName(opts.engine);
  const redis: RedisServer | undefined =
    opts.engine === 'redis' ? await startRedis({ pinning: opts.pinning }) : undefined;
  try {
    const port = await freePort();
    const apiKey = randomBytes(16).toString('hex');
    const tokenSecret = randomBytes(32).toString('hex');
    const file = join(opts.certs.dir, `centrifugo-${opts.engine}.json`);
    const config = centrifugoConfig({
      ...opts,
      port,
      apiKey,
      tokenSecret,
      ...(redis ? { redisUrl: redis.url } : {}),
    });
    writeFileSync(file, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
    const proc = await startServerProcess({
      name,
      argv: [...opts.pinning.serverPrefix(), opts.bin, '--config', file],
      port,
      env: {},
      ready: { https: { path: '/health', ca: opts.certs.ca } },
      readyTimeoutMs: 30_000,
    });
    const processes: NamedProcess[] = [
      { name, pid: proc.pid },
      ...(redis ? [{ name: redis.process.name, pid: redis.process.pid }] : []),
    ];
    return {
      engine: opts.engine,
      name,
      process: proc,
      processes,
      origin: `https://127.0.0.1:${port}`,
      wsUrl: `wss://127.0.0.1:${port}/connection/websocket`,
      ...(redis ? { redisUrl: redis.url } : {}),
      apiKey,
      tokenSecret,
      pinned: opts.pinning.enabled
        ? processes.map((p) => `${p.name} (pid ${p.pid}) → CPU ${opts.pinning.serverCpus}`)
        : [],
      stop: async () => {
        await proc.stop();
        await redis?.stop();
      },
    };
  } catch (err) {
    await redis?.stop();
    throw err;
  }
}
