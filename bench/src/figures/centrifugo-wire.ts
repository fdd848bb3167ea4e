import { createHmac } from 'node:crypto';
import { type CentrifugoServer, PERSONAL_NAMESPACE } from '../env/centrifugo-server.js';

/**
 * How the load generator speaks to Centrifugo, in one place, as its documented client protocol
 * and server API have it: a recipient is a user whose connection JWT (HS256) carries `sub` =
 * recipient, which the server subscribes to `personal:#<recipient>`; events are published to that
 * channel through `POST /api/publish` or `POST /api/batch` with the API key; the payload's JSON
 * text is the publication's `data`, verbatim.
 */
export function personalChannel(recipient: string): string {
  return `${PERSONAL_NAMESPACE}:#${recipient}`;
}

/** Lifetime of a connection token: longer than any run, like Herald's 4-hour Test keys. */
const TOKEN_TTL_S = 4 * 3600;

/** A connection JWT for the recipient, signed HS256 with the server's secret. */
export function connectionToken(secret: string, recipient: string, nowMs = Date.now()): string {
  const part = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const head = part({ alg: 'HS256', typ: 'JWT' });
  const claims = part({ sub: recipient, exp: Math.floor(nowMs / 1000) + TOKEN_TTL_S });
  const sig = createHmac('sha256', secret).update(`${head}.${claims}`).digest('base64url');
  return `${head}.${claims}.${sig}`;
}

/** The body of `POST /api/publish`. */
export function publishBody(recipient: string, payloadJson: string): string {
  return `{"channel":"${personalChannel(recipient)}","data":${payloadJson}}`;
}

/**
 * The body of `POST /api/batch`: one publish command per event. `parallel` is Centrifugo's
 * documented setting for batches that need not keep their order (each event goes to another
 * recipient), and what a team publishing batches through the Redis engine would set.
 */
export function batchBody(
  events: ReadonlyArray<{ recipient: string; payloadJson: string }>,
): string {
  const list = events.map((e) => `{"publish":${publishBody(e.recipient, e.payloadJson)}}`);
  return `{"commands":[${list.join(',')}],"parallel":true}`;
}

/** Throws unless a `POST /api/publish` answer says the publication was accepted. */
export function expectPublished(r: { status: number; text: string }): void {
  if (r.status !== 200 || !r.text.includes('"result"'))
    throw new Error(`Centrifugo publish answered HTTP ${r.status}: ${r.text.slice(0, 200)}`);
}

/** Throws unless every command of a `POST /api/batch` answer was accepted. */
export function expectBatchPublished(r: { status: number; text: string }, size: number): void {
  if (r.status !== 200)
    throw new Error(`Centrifugo batch answered HTTP ${r.status}: ${r.text.slice(0, 200)}`);
  const { replies } = JSON.parse(r.text) as { replies?: Array<{ error?: unknown }> };
  if (replies?.length !== size)
    throw new Error(`${replies?.length ?? 0} replies for ${size} commands`);
  const bad = replies.find((x) => x.error !== undefined);
  if (bad) throw new Error(`a command answered ${JSON.stringify(bad).slice(0, 200)}`);
}

/** The connect command: with `recover`, the personal channel's history is replayed from the start. */
export function connectCommand(
  server: CentrifugoServer,
  recipient: string,
  recover: boolean,
): string {
  const token = connectionToken(server.tokenSecret, recipient);
  const subs = recover
    ? { [personalChannel(recipient)]: { recover: true, offset: 0, epoch: '' } }
    : undefined;
  return JSON.stringify({ id: 1, connect: { token, ...(subs ? { subs } : {}) } });
}

/** One message of Centrifugo's JSON protocol, as far as the bench reads it. */
interface ServerMessage {
  id?: number;
  error?: { code: number; message: string };
  connect?: {
    subs?: Record<string, { publications?: Array<{ data: unknown }>; recovered?: boolean }>;
  };
  push?: { channel: string; pub?: { data: unknown } };
}

export interface ConnectReply {
  /** Publications replayed in the connect reply (recovery). */
  recovered: unknown[];
  /** False when recovery was asked for and the server could not replay the whole history. */
  complete: boolean;
}

/**
 * Reads one WebSocket frame of Centrifugo's JSON protocol (several messages may share a frame,
 * one per line): answers the server's ping (`{}`) with a pong, hands every publication's data to
 * `onPublication` and the connect reply to `onConnect`.
 */
export function readFrame(
  frame: Buffer,
  send: (text: string) => void,
  onPublication: (data: unknown) => void,
  onConnect: (reply: ConnectReply | Error) => void,
): void {
  for (const line of frame.toString('utf8').split('\n')) {
    if (line === '') continue;
    if (line === '{}') {
      send('{}');
      continue;
    }
    const m = JSON.parse(line) as ServerMessage;
    if (m.push?.pub) onPublication(m.push.pub.data);
    else if (m.id === 1 && m.error)
      onConnect(new Error(`connect refused: ${m.error.code} ${m.error.message}`));
    else if (m.id === 1 && m.connect) {
      const subs = Object.values(m.connect.subs ?? {});
      const recovered = subs.flatMap((s) => (s.publications ?? []).map((p) => p.data));
      for (const data of recovered) onPublication(data);
      onConnect({ recovered, complete: subs.every((s) => s.recovered !== false) });
    }
  }
}
