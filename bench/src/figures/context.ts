import { performance } from 'node:perf_hooks';
import type { PushService } from '@herald/testkit';
import type { JetStreamClient, JetStreamManager, NatsConnection } from 'nats';
import type { BenchConfig } from '../config.js';
import type { BaselineServers } from '../env/baseline-servers.js';
import type { CentrifugoEngine, CentrifugoServer } from '../env/centrifugo-server.js';
import type { HeraldStack } from '../env/herald-stack.js';
import type { NamedProcess } from '../env/process-cpu.js';
import type { WebhookReceiver } from '../env/webhook-receiver.js';
import type { ClientTls } from '../load/client-tls.js';
import type { Poster } from '../load/http-poster.js';
import type { SourceAddresses } from '../load/source-addresses.js';
import type { PayloadMaker } from '../payload.js';

/** Everything a figure needs: the running servers, the load generator's clients, the bounds. */
export interface BenchContext {
  config: BenchConfig;
  stack: HeraldStack;
  baselines: BaselineServers;
  /** The Centrifugo peers (Redis engine first), each with its API client; empty when skipped. */
  centrifugo: CentrifugoPeer[];
  /** Why the Centrifugo baselines did not run, for the report; undefined when they ran. */
  centrifugoSkipped?: string;
  /** Every server process (Herald's and the baselines'), for CPU accounting. */
  servers: NamedProcess[];
  addresses: SourceAddresses;
  /** The one TLS client setup every fleet shares. */
  tls: ClientTls;
  payload: PayloadMaker;
  /** The load generator's own NATS connection (dispatch path, floors, raw JetStream). */
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
  /** HTTP clients, one pool per server, `config.concurrency` connections each. */
  http: {
    ingress: Poster;
    rawWs: Poster;
    socketIo: Poster;
    koaJetStream: Poster;
    designFloor: Poster;
  };
  /** Figure 7's HTTPS receiver, started with the stack when figure 7 runs (the status service trusts its CA). */
  webhookReceiver?: WebhookReceiver;
  /**
   * Figure 8's HTTPS Web Push service (lib/testkit's: it decrypts and checks every push), in the
   * load generator's process; the status service trusts its CA through PUSH_CA_FILE.
   */
  pushService?: PushService;
  /** Progress line on stderr. */
  log(message: string): void;
  /** Throws when the run's deadline passed, so every figure stops between measurements. */
  checkDeadline(): void;
}

/** A Centrifugo server and the load generator's client of its server API. */
export interface CentrifugoPeer {
  engine: CentrifugoEngine;
  server: CentrifugoServer;
  /** `config.concurrency` keep-alive connections, the API key on every request. */
  api: Poster;
}

export class DeadlineExceeded extends Error {
  constructor(deadlineMs: number) {
    super(`the run exceeded its deadline of ${deadlineMs / 1000} s (BENCH_DEADLINE_S)`);
    this.name = 'DeadlineExceeded';
  }
}

export function deadlineChecker(deadlineMs: number): () => void {
  const end = performance.now() + deadlineMs;
  return () => {
    if (performance.now() > end) throw new DeadlineExceeded(deadlineMs);
  };
}

/** A handshake slower than this counts as a failed accept. */
export const HANDSHAKE_TIMEOUT_MS = 10_000;
/** How long a scenario waits for frames still in flight after its load stopped. */
export const SETTLE_TIMEOUT_MS = 10_000;
/** The most operations a timed loop may issue per second of its window (a count bound). */
export const MAX_OPS_PER_SEC = 1_000_000;
