import { randomUUID } from 'node:crypto';
import type PusherServer from 'pusher';
import { expect } from 'vitest';
import {
  heraldIdOf,
  type PusherApp,
  type PusherJsClient,
  pusherJs,
  pusherServer,
} from '../deploy/pusher-clients.js';
import type { LoadTarget } from './load.js';

// The cluster test's Pusher load (issue 41), beside load.ts's: durable user events sent with the
// stock `pusher` library's sendToUser through the load balancer's ingress port, to users whose
// stock pusher-js clients connect through its edge port and sign in (pusher-js signs in again
// after every reconnect). Online users keep a client the whole run; offline ones connect only at
// the end. Every event answered 200 (X-Herald-Status sent or queued) must reach its user at least
// once, counted by the herald_id Herald splices into the data.

/** Event name of the load's sendToUser calls. */
const EVENT = 'load';
/** Most time every client may take to connect and sign in (at the start, and at the end). */
const OPEN_LIMIT_MS = 60_000;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export interface PusherUser {
  id: string;
  online: boolean;
  client?: PusherJsClient;
  /** Between pusher:signin_success and the connection's next state change. */
  signedIn: boolean;
  /** How many times each herald_id arrived. */
  received: Map<string, number>;
  /** Connections lost while the load ran (state `connected` left). */
  lost: number;
}

export interface PusherDispatch {
  seq: number;
  to: string;
  phase: string;
  /** HTTP status; 0 for no answer (connection failed or timed out). */
  status: number;
  /** X-Herald-Id and X-Herald-Status of a 200. */
  id?: string;
  herald?: string;
  error?: string;
}

/** A 200 with one event id and a status of sent or queued: Herald holds itself to it. */
export const pusherAccepted = (d: PusherDispatch) => d.status === 200;

export class PusherLoad {
  readonly run = randomUUID();
  readonly users: PusherUser[] = [];
  readonly dispatches: PusherDispatch[] = [];
  phase = 'warm-up';
  #seq = 0;
  #sending = false;
  #worker: Promise<void> = Promise.resolve();
  #measuring = true;
  readonly #server: PusherServer;

  constructor(
    private readonly target: Omit<LoadTarget, 'apiKey'>,
    private readonly app: PusherApp,
    shape: { online: number; offline: number },
  ) {
    this.#server = pusherServer(target.baseUrl, target.ca, app);
    const add = (n: number, online: boolean) => {
      for (let i = 0; i < n; i++)
        this.users.push({
          id: randomUUID(),
          online,
          signedIn: false,
          received: new Map(),
          lost: 0,
        });
    };
    add(shape.online, true);
    add(shape.offline, false);
  }

  /** Connects and signs in every online user; resolves once all are signed in. */
  async connectOnline(): Promise<void> {
    for (const u of this.users.filter((u) => u.online)) this.#connect(u);
    await this.allSignedIn(OPEN_LIMIT_MS);
  }

  /** Waits until every user with a client is connected and signed in; throws past `limitMs`. */
  async allSignedIn(limitMs: number): Promise<void> {
    const deadline = Date.now() + limitMs;
    const waiting = () => this.users.filter((u) => u.client && !u.signedIn);
    while (waiting().length > 0) {
      if (Date.now() > deadline)
        throw new Error(
          `${waiting().length} pusher-js clients not signed in after ${limitMs} ms: ${waiting()
            .map((u) => u.client?.connection.state)
            .join(', ')}`,
        );
      await sleep(100);
    }
  }

  /** One sender: sendToUser to the users in turn, `pauseMs` between answers. */
  startSending(pauseMs: number): void {
    this.#sending = true;
    this.#worker = (async () => {
      while (this.#sending) {
        await this.#send();
        await sleep(pauseMs);
      }
    })();
  }

  async stopSending(): Promise<void> {
    this.#sending = false;
    await this.#worker;
  }

  /** The end: every client is closed, then every user (offline ones too) connects and signs in. */
  async reconnectEveryone(): Promise<void> {
    this.#measuring = false;
    for (const u of this.users) u.client?.disconnect();
    await sleep(500);
    for (const u of this.users) this.#connect(u);
    await this.allSignedIn(OPEN_LIMIT_MS);
  }

  close(): void {
    for (const u of this.users) u.client?.disconnect();
  }

  /** Accepted events whose herald_id has not arrived at their user (yet). */
  missing(): PusherDispatch[] {
    const byId = new Map(this.users.map((u) => [u.id, u]));
    return this.dispatches.filter(
      (d) => pusherAccepted(d) && !(d.id !== undefined && byId.get(d.to)?.received.has(d.id)),
    );
  }

  /** Each phase's counts, and the whole run's: for the log and docs/operations.md. */
  figures(): Record<string, Record<string, number>> {
    const lost = new Set(this.missing());
    const count = (ds: PusherDispatch[]) => {
      const ok = ds.filter(pusherAccepted);
      const copies = new Map<string, number>();
      for (const u of this.users) for (const [id, n] of u.received) copies.set(id, n);
      return {
        sent: ds.length,
        answered200: ok.length,
        live: ok.filter((d) => d.herald === 'sent').length,
        queued: ok.filter((d) => d.herald === 'queued').length,
        refused503: ds.filter((d) => d.status === 503).length,
        noAnswer: ds.filter((d) => d.status === 0).length,
        other: ds.filter((d) => d.status !== 0 && d.status !== 200 && d.status !== 503).length,
        received: ok.filter((d) => !lost.has(d)).length,
        lost: ok.filter((d) => lost.has(d)).length,
        extraCopies: ok.reduce((n, d) => n + Math.max(0, (copies.get(d.id ?? '') ?? 0) - 1), 0),
      };
    };
    const phases = [...new Set(this.dispatches.map((d) => d.phase))];
    const out: Record<string, Record<string, number>> = {};
    for (const p of phases) out[p] = count(this.dispatches.filter((d) => d.phase === p));
    out.total = {
      ...count(this.dispatches),
      connectionsLost: this.users.reduce((n, u) => n + u.lost, 0),
    };
    return out;
  }

  #connect(u: PusherUser): void {
    const client = pusherJs(this.target.wsUrl, this.target.ca, this.app, this.#server, u.id);
    u.client = client;
    u.signedIn = false;
    client.connection.bind('state_change', (change) => {
      const { previous, current } = change as { previous: string; current: string };
      if (current !== 'connected') u.signedIn = false;
      if (previous === 'connected' && current !== 'connected' && this.#measuring) u.lost++;
    });
    client.connection.bind('message', (message) => {
      if ((message as { event?: string }).event === 'pusher:signin_success') u.signedIn = true;
    });
    client.user.bind(EVENT, (data) => {
      const id = heraldIdOf(data);
      if (id === undefined || (data as { run?: string }).run !== this.run) return;
      u.received.set(id, (u.received.get(id) ?? 0) + 1);
    });
    client.signin();
  }

  async #send(): Promise<void> {
    const seq = this.#seq++;
    const to = this.users[seq % this.users.length] as PusherUser;
    const phase = this.phase;
    try {
      const res = await this.#server.sendToUser(to.id, EVENT, { run: this.run, seq });
      const id = res.headers.get('x-herald-id') ?? undefined;
      const herald = res.headers.get('x-herald-status') ?? undefined;
      this.dispatches.push({ seq, to: to.id, phase, status: res.status, id, herald });
    } catch (err) {
      const e = err as { status?: number; body?: string; message?: string };
      this.dispatches.push({
        seq,
        to: to.id,
        phase,
        status: e.status ?? 0,
        error: String(e.body ?? e.message ?? err).slice(0, 300),
      });
    }
  }
}

/** Soft: no accepted event lost, every 200 named one event sent or queued, every refusal a 503. */
export function expectPusherLoad(load: PusherLoad, figures: string): void {
  const lost = load.missing();
  expect
    .soft(
      lost.slice(0, 20).map((d) => `${d.phase}: seq ${d.seq} ${d.id} (${d.herald})`),
      `${lost.length} Pusher user events answered 200 and never received; ${figures}`,
    )
    .toEqual([]);
  const ok = load.dispatches.filter(pusherAccepted);
  expect
    .soft(
      ok
        .filter(
          (d) => !/^[0-9a-f-]{36}$/.test(d.id ?? '') || !/^(sent|queued)$/.test(d.herald ?? ''),
        )
        .map((d) => `seq ${d.seq}: X-Herald-Id ${d.id}, X-Herald-Status ${d.herald}`),
      'a 200 without one event id and a status of sent or queued',
    )
    .toEqual([]);
  expect
    .soft(
      load.dispatches
        .filter((d) => d.status !== 0 && d.status !== 200 && d.status !== 503)
        .slice(0, 5)
        .map((d) => `${d.phase}: ${d.status} ${d.error}`),
      'Pusher answers other than 200 or 503',
    )
    .toEqual([]);
  expect.soft(ok.length, 'Pusher user events answered 200').toBeGreaterThan(0);
  expect
    .soft(ok.filter((d) => d.herald === 'sent').length, 'Pusher user events proven live (sent)')
    .toBeGreaterThan(0);
}
