import { WEBHOOK_STATUS_OF_TYPE, WEBHOOK_TEST_TYPE, type WebhookEventType } from '@herald/proto';

/** One first transition of one event, what a message's body and id are made of. */
export interface Transition {
  type: WebhookEventType;
  account: string;
  eventId: string;
  recipient: string | null;
  /** '' or null while unknown. */
  keyId: string | null;
  /** Epoch ms of the transition. */
  at: number;
  /** `delivered`: the device that proved receipt. */
  device?: string | undefined;
  /** An opted-in key's payload, JSON text, carried as is. */
  payloadJson?: string | null | undefined;
}

/** The `webhook-id` of a transition: `<event id>:<type>`, the same for every retry and replay. */
export function messageId(t: Pick<Transition, 'eventId' | 'type'>): string {
  return `${t.eventId}:${t.type}`;
}

/**
 * The JSON body (proto's WebhookBody), written by hand so an opted-in payload's bytes are carried
 * as the sender sent them rather than parsed and serialized again.
 */
export function webhookBody(t: Transition): string {
  const data = [
    `"id":${JSON.stringify(t.eventId)}`,
    `"recipient":${JSON.stringify(t.recipient)}`,
    `"key_id":${JSON.stringify(t.keyId === '' ? null : t.keyId)}`,
    `"status":${JSON.stringify(WEBHOOK_STATUS_OF_TYPE[t.type])}`,
    `"ts":${t.at}`,
  ];
  if (t.device !== undefined) data.push(`"device":${JSON.stringify(t.device)}`);
  if (t.payloadJson !== undefined && t.payloadJson !== null)
    data.push(`"payload":${t.payloadJson}`);
  const timestamp = new Date(t.at).toISOString();
  return `{"type":${JSON.stringify(t.type)},"timestamp":"${timestamp}","data":{${data.join(',')}}}`;
}

/** The body of "send a test event": every endpoint gets it, whatever it subscribes to. */
export function testBody(id: string, at: number): string {
  return JSON.stringify({
    type: WEBHOOK_TEST_TYPE,
    timestamp: new Date(at).toISOString(),
    data: { id, recipient: null, key_id: null, status: 'test', ts: at },
  });
}
