import { randomUUID } from 'node:crypto';
import https from 'node:https';
import { openSocket, type TestSocket } from '@herald/testkit';

// The cluster test's steady load: senders and sockets, every one through the load balancer, with
// a record of what was answered, what arrived, and when sockets were lost and back.

export interface LoadTarget {
  baseUrl: string;
  wsUrl: string;
  ca: string;
  apiKey: string;
}

export interface Recipient {
  id: string;
  /** Online recipients keep a socket open the whole time; offline ones connect only at the end. */
  online: boolean;
  v1: boolean;
  /** The key its events are sent and its sockets opened with, when not the load's (push.ts). */
  apiKey?: string;
  /** How many times each event (by seq) arrived. */
  received: Map<number, number>;
  socket?: TestSocket;
  /** Each lost socket: when it went, and when a socket was open again (undefined: not yet). */
  outages: Array<{ lostAt: number; backAt?: number }>;
}

export interface Dispatch {
  seq: number;
  to: string;
  phase: string;
  /** When the answer (or the failure) came. */
  at: number;
  /** HTTP status; 0 for a connection that failed or timed out. */
  status: number;
  /** The event's id, from the answer of an accepted one (200 or 202). */
  id?: string;
  retryAfter?: string;
  error?: string;
}

/** One dispatch may take this long before it counts as failed (never as answered). */
const DISPATCH_TIMEOUT_MS = 15_000;
/** An upgrade that has not opened by then is given up and tried again. */
const OPEN_TIMEOUT_MS = 10_000;
const RECONNECT_PAUSE_MS = 200;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export const accepted = (d: Dispatch) => d.status === 200 || d.status === 202;

/** The `id` of an accepted answer's body (`{"status","id"}`); undefined if it has none. */
function eventId(body: string): string | undefined {
  try {
    const id = (JSON.parse(body) as { id?: unknown }).id;
    return typeof id === 'string' ? id : undefined;
  } catch {
    return undefined;
  }
}

/** A frame some socket got that was not JSON (text cut to 200 chars). */
export interface InvalidFrame {
  recipient: string;
  v1: boolean;
  text: string;
}

export class ClusterLoad {
  readonly run = randomUUID();
  readonly recipients: Recipient[] = [];
  readonly dispatches: Dispatch[] = [];
  phase = 'warm-up';
  #seq = 0;
  #sending = false;
  #connecting = true;
  #workers: Promise<void>[] = [];
  #clients = new Map<string, Promise<void>>();
  /** Every socket opened (herald.v1 ones record their non-JSON frames themselves). */
  #sockets: Array<{ r: Recipient; sock: TestSocket }> = [];
  #invalidPlain: InvalidFrame[] = [];
  readonly #agent: https.Agent;

  constructor(
    private readonly target: LoadTarget,
    shape: {
      onlinePlain: number;
      onlineV1: number;
      offlinePlain: number;
      offlineV1: number;
      /** Offline recipients (herald.v1) whose events go with `pushKey`, a key that pushes. */
      offlinePush?: number;
    },
    pushKey?: string,
  ) {
    this.#agent = new https.Agent({ keepAlive: true, ca: target.ca, maxSockets: 16 });
    const add = (n: number, online: boolean, v1: boolean, apiKey?: string) => {
      for (let i = 0; i < n; i++)
        this.recipients.push({
          id: randomUUID(),
          online,
          v1,
          ...(apiKey ? { apiKey } : {}),
          received: new Map(),
          outages: [],
        });
    };
    add(shape.onlinePlain, true, false);
    add(shape.onlineV1, true, true);
    add(shape.offlinePlain, false, false);
    add(shape.offlineV1, false, true);
    if ((shape.offlinePush ?? 0) > 0 && !pushKey) throw new Error('offlinePush needs a pushKey');
    add(shape.offlinePush ?? 0, false, true, pushKey);
  }

  /** Opens every online recipient's socket (kept open, reopened whenever it is lost). */
  async connectOnline(): Promise<void> {
    for (const r of this.recipients.filter((r) => r.online)) this.#keepConnected(r);
    await this.allConnected(
      60_000,
      this.recipients.filter((r) => r.online),
    );
  }

  /** Starts `workers` senders, each sending one event after another to the recipients in turn. */
  startSending(workers: number, pauseMs: number): void {
    this.#sending = true;
    for (let w = 0; w < workers; w++) this.#workers.push(this.#sendLoop(pauseMs));
  }

  async stopSending(): Promise<void> {
    this.#sending = false;
    await Promise.all(this.#workers);
  }

  /** The end: every socket is closed, then every recipient (offline ones too) connects again. */
  async reconnectEveryone(): Promise<void> {
    this.#connecting = false;
    await Promise.all(this.recipients.map((r) => r.socket?.close()));
    await Promise.all(this.#clients.values());
    this.#clients.clear();
    this.#connecting = true;
    for (const r of this.recipients) this.#keepConnected(r);
    await this.allConnected(60_000, this.recipients);
  }

  async close(): Promise<void> {
    this.#sending = false;
    this.#connecting = false;
    await Promise.all(this.recipients.map((r) => r.socket?.close().catch(() => undefined)));
    this.#agent.destroy();
  }

  async allConnected(limitMs: number, which: Recipient[]): Promise<void> {
    const deadline = Date.now() + limitMs;
    while (!which.every((r) => r.socket && r.socket.ws.readyState === 1)) {
      if (Date.now() > deadline) {
        const down = which.filter((r) => !(r.socket && r.socket.ws.readyState === 1)).length;
        throw new Error(`${down} of ${which.length} sockets not open after ${limitMs} ms`);
      }
      await sleep(100);
    }
  }

  /** Events answered 200 or 202 that have not arrived (yet). */
  missing(): Dispatch[] {
    const byId = new Map(this.recipients.map((r) => [r.id, r]));
    return this.dispatches.filter((d) => accepted(d) && !byId.get(d.to)?.received.has(d.seq));
  }

  /** Frames that were not JSON, on every socket the load opened. */
  invalidFrames(): InvalidFrame[] {
    const v1 = this.#sockets.flatMap(({ r, sock }) =>
      sock.invalidFrames.map((f) => ({ recipient: r.id, v1: true, text: f.text })),
    );
    return [...v1, ...this.#invalidPlain];
  }

  #keepConnected(r: Recipient): void {
    const loop = async () => {
      while (this.#connecting) {
        const sock = openSocket(this.target.wsUrl, this.target.ca, {
          apiKey: r.apiKey ?? this.target.apiKey,
          recipient: r.id,
          client: 'mobile',
          v1: r.v1,
        });
        this.#sockets.push({ r, sock });
        sock.ws.on('message', (data) => this.#onFrame(r, String(data)));
        const opened = await Promise.race([
          sock.opened.then(() => true).catch(() => false),
          sleep(OPEN_TIMEOUT_MS).then(() => false),
        ]);
        if (!opened) {
          sock.ws.terminate();
          await sleep(RECONNECT_PAUSE_MS);
          continue;
        }
        r.socket = sock;
        const last = r.outages.at(-1);
        if (last && last.backAt === undefined) last.backAt = Date.now();
        await sock.ended;
        if (this.#connecting) r.outages.push({ lostAt: Date.now() });
        await sleep(RECONNECT_PAUSE_MS);
      }
    };
    this.#clients.set(r.id, loop());
  }

  #onFrame(r: Recipient, text: string): void {
    let parsed: {
      type?: string;
      payload?: { run?: string; seq?: number };
      run?: string;
      seq?: number;
    } | null;
    try {
      parsed = JSON.parse(text);
    } catch {
      // A herald.v1 socket recorded it already (TestSocket.invalidFrames).
      if (!r.v1) this.#invalidPlain.push({ recipient: r.id, v1: false, text: text.slice(0, 200) });
      return;
    }
    if (parsed === null || typeof parsed !== 'object') return;
    const payload = r.v1 ? (parsed.type === 'event' ? parsed.payload : undefined) : parsed;
    if (payload?.run !== this.run || typeof payload.seq !== 'number') return;
    r.received.set(payload.seq, (r.received.get(payload.seq) ?? 0) + 1);
  }

  async #sendLoop(pauseMs: number): Promise<void> {
    while (this.#sending) {
      const seq = this.#seq++;
      const to = this.recipients[seq % this.recipients.length] as Recipient;
      const phase = this.phase;
      const body = JSON.stringify({
        recipient: to.id,
        payload: { run: this.run, seq },
        api_key: to.apiKey ?? this.target.apiKey,
        client: 'mobile',
      });
      const answer = await this.#post(body);
      this.dispatches.push({ seq, to: to.id, phase, at: Date.now(), ...answer });
      await sleep(pauseMs);
    }
  }

  #post(body: string): Promise<Pick<Dispatch, 'status' | 'id' | 'retryAfter' | 'error'>> {
    return new Promise((resolve) => {
      const req = https.request(
        new URL('/notify', this.target.baseUrl),
        {
          method: 'POST',
          agent: this.#agent,
          timeout: DISPATCH_TIMEOUT_MS,
          headers: {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const retry = res.headers['retry-after'];
            const text = Buffer.concat(chunks).toString('utf8');
            resolve({
              status: res.statusCode ?? 0,
              ...(retry ? { retryAfter: String(retry) } : {}),
              ...(accepted({ status: res.statusCode ?? 0 } as Dispatch)
                ? { id: eventId(text) }
                : { error: text.slice(0, 300) }),
            });
          });
          res.on('error', (err) => resolve({ status: 0, error: String(err) }));
        },
      );
      req.on('timeout', () => req.destroy(new Error(`no answer in ${DISPATCH_TIMEOUT_MS} ms`)));
      req.on('error', (err) => resolve({ status: 0, error: String(err) }));
      req.end(body);
    });
  }
}
