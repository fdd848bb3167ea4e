import { CONNECT_PATH, subjects } from '@herald/proto';
import type { HeraldStack } from '../env/herald-stack.js';
import { seqOfValue } from '../payload.js';

/**
 * How the load generator speaks to Herald, in one place: the notify body with the payload's text
 * inserted verbatim, and the connect URL of a recipient's socket (plain or herald.v1 framing is
 * chosen by the subprotocol the fleet offers).
 */
export function notifyBody(stack: HeraldStack, recipient: string, payloadJson: string): string {
  return `{"recipient":"${recipient}","payload":${payloadJson},"api_key":"${stack.apiKey}","client":"mobile"}`;
}

/**
 * `batch`: the socket asks for `events` frames (herald.v1 `batch=1`), as the SDK does: queued
 * events ready together come in one frame, answered with one list ack.
 */
export function connectUrl(stack: HeraldStack, recipient: string, batch = false): string {
  const q = new URLSearchParams({ api_key: stack.apiKey, recipient, client: 'mobile' });
  if (batch) q.set('batch', '1');
  return `${stack.wsUrl}${CONNECT_PATH}?${q}`;
}

/**
 * The SDK's default client (clients/sdk/src/herald.ts `subscribe`): herald.v1 framing, `batch=1`,
 * and the installation's `device` id, so the edge feeds the socket from the device's position.
 * `apiKey`: another tenant's key (the inbox key's rows); default the stack's.
 */
export function sdkConnectUrl(
  stack: HeraldStack,
  recipient: string,
  device: string,
  apiKey = stack.apiKey,
): string {
  const q = new URLSearchParams({ api_key: apiKey, recipient, client: 'mobile', batch: '1' });
  q.set('device', device);
  return `${stack.wsUrl}${CONNECT_PATH}?${q}`;
}

/** One event a herald.v1 frame carried: its id and its payload's sequence number (-1 if none). */
export interface FrameEvent {
  id: string;
  seq: number;
}

/**
 * Acks a herald.v1 server frame as the SDK does and returns the events it carried (none for a
 * frame that is not an event): `event` gets `{"type":"ack","id":…}`, `events` one list ack.
 */
export function ackFrame(data: Buffer, send: (ack: string) => void): FrameEvent[] {
  const frame = JSON.parse(data.toString('utf8')) as {
    type: string;
    id?: string;
    payload?: unknown;
    events?: Array<{ id: string; payload?: unknown }>;
  };
  if (frame.type === 'event' && frame.id !== undefined) {
    send(`{"type":"ack","id":${JSON.stringify(frame.id)}}`);
    return [{ id: frame.id, seq: seqOfValue(frame.payload) }];
  }
  if (frame.type !== 'events' || !frame.events) return [];
  const ids = frame.events.map((e) => e.id);
  send(`{"type":"ack","ids":${JSON.stringify(ids)}}`);
  return frame.events.map((e) => ({ id: e.id, seq: seqOfValue(e.payload) }));
}

export function dispatchSubject(stack: HeraldStack): string {
  return subjects.dispatch(stack.account);
}

/** The baselines' push body: the same payload text, addressed the same way, without a key. */
export function pushBody(recipient: string, payloadJson: string): string {
  return `{"recipient":"${recipient}","payload":${payloadJson}}`;
}

export function rawWsUrl(origin: string, recipient: string): string {
  return `${origin.replace(/^https:/, 'wss:')}/ws/connect?recipient=${recipient}`;
}

/**
 * The batch body of `POST /notify/batch`: one event per recipient, payload text verbatim, with
 * the stack's key or `apiKey` (another tenant's).
 */
export function notifyBatchBody(
  stack: HeraldStack,
  events: ReadonlyArray<{ recipient: string; payloadJson: string }>,
  apiKey = stack.apiKey,
): string {
  const list = events.map((e) => `{"recipient":"${e.recipient}","payload":${e.payloadJson}}`);
  return `{"api_key":"${apiKey}","client":"mobile","events":[${list.join(',')}]}`;
}

/** The baselines' batch body (`POST /push/batch`): the same events, without a key. */
export function pushBatchBody(
  events: ReadonlyArray<{ recipient: string; payloadJson: string }>,
): string {
  const list = events.map((e) => `{"recipient":"${e.recipient}","payload":${e.payloadJson}}`);
  return `{"events":[${list.join(',')}]}`;
}

/**
 * Reads a batch answer (Herald's, the floor's and the baselines' share a shape): how many events
 * were sent (200) and how many stored (202). Throws on any other answer, so the loop counts the
 * request as failed.
 */
export function batchOutcome(
  r: { status: number; text: string },
  size: number,
): { sent: number; stored: number } {
  if (r.status !== 200) throw new Error(`HTTP ${r.status}: ${r.text.slice(0, 200)}`);
  const { results } = JSON.parse(r.text) as { results: Array<{ http_status: number }> };
  if (results.length !== size) throw new Error(`${results.length} results for ${size} events`);
  let sent = 0;
  let stored = 0;
  for (const x of results) {
    if (x.http_status === 200) sent++;
    else if (x.http_status === 202) stored++;
    else throw new Error(`an event answered ${JSON.stringify(x).slice(0, 200)}`);
  }
  return { sent, stored };
}

/**
 * Checks a batch answer: 200, and every event's slot answered `want` (200 sent, 202 stored).
 * Throws with the first slot that did not, so the loop counts the request as failed.
 */
export function expectBatch(r: { status: number; text: string }, size: number, want: number): void {
  if (r.status !== 200) throw new Error(`HTTP ${r.status}: ${r.text.slice(0, 200)}`);
  const { results } = JSON.parse(r.text) as { results: Array<{ http_status: number }> };
  if (results.length !== size) throw new Error(`${results.length} results for ${size} events`);
  const bad = results.find((x) => x.http_status !== want);
  if (bad) throw new Error(`an event answered ${JSON.stringify(bad).slice(0, 200)}`);
}
