import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import WebSocket from 'ws';

type Kind = 'reader' | 'silent' | 'slow';
const KINDS: Kind[] = ['reader', 'reader', 'silent', 'slow'];

export interface ChurnCounts {
  opened: number;
  /** Upgrades refused or failed (the edge restarting, the connect rate). */
  refused: number;
  /** Closed with a close frame, and dropped without one (TCP reset). */
  closed: number;
  dropped: number;
}

/**
 * Sockets that come and go every second, on recipients nobody sends to: half read every frame,
 * a quarter never answer a ping (silent: plain framing, no pong), a quarter stop reading their
 * socket for their whole life (slow readers). Each lives 1 to 5 s and then closes, or every
 * third is dropped without a close frame, so the edge's per-socket state is made and unmade all
 * run long.
 */
export class Churn {
  readonly counts: ChurnCounts = { opened: 0, refused: 0, closed: 0, dropped: 0 };
  /** Every recipient a churned socket connected as (none may keep a subscription at the end). */
  readonly recipients = new Set<string>();
  readonly #open = new Set<WebSocket>();
  #timer: NodeJS.Timeout | undefined;
  #n = 0;

  constructor(
    private readonly opts: { wsUrl: string; ca: string; apiKey: string; perSecond: number },
  ) {}

  start(): void {
    if (this.opts.perSecond === 0) return;
    this.#timer = setInterval(() => {
      for (let i = 0; i < this.opts.perSecond; i++)
        this.#one(KINDS[this.#n++ % KINDS.length] ?? 'reader');
    }, 1000);
  }

  /** Stops opening sockets and closes the open ones; resolves once every one has closed. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await Promise.all(
      [...this.#open].map(
        (ws) =>
          new Promise<void>((resolve) => {
            ws.once('close', () => resolve());
            ws.terminate();
          }),
      ),
    );
  }

  #one(kind: Kind): void {
    const { wsUrl, ca, apiKey } = this.opts;
    const recipient = randomUUID();
    this.recipients.add(recipient);
    const q = new URLSearchParams({ api_key: apiKey, recipient, client: 'mobile' });
    const ws = new WebSocket(`${wsUrl}/ws/connect?${q}`, kind === 'silent' ? [] : ['herald.v1'], {
      ca,
      autoPong: kind !== 'silent',
    });
    this.#open.add(ws);
    const drop = this.#n % 3 === 0;
    let opened = false;
    ws.on('error', () => {});
    ws.on('open', () => {
      opened = true;
      this.counts.opened++;
      if (kind === 'slow') (ws as unknown as { _socket?: Socket })._socket?.pause();
      const t = setTimeout(
        () => (drop ? ws.terminate() : ws.close(1000)),
        1000 + Math.random() * 4000,
      );
      ws.once('close', () => clearTimeout(t));
    });
    ws.on('close', () => {
      this.#open.delete(ws);
      if (!opened) this.counts.refused++;
      else if (drop) this.counts.dropped++;
      else this.counts.closed++;
    });
  }
}
