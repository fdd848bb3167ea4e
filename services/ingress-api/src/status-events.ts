import type { StatusEvent } from '@herald/proto';
import type { StatusBatcher } from '@herald/status-client';
import type { Outcome } from './outcome.js';

interface Dispatched {
  key: { id: string; account_id: string };
  recipient: string;
}

type Deliver<T extends Dispatched, P> = (
  target: T,
  id: string,
  msgId: string,
  pushed?: P,
) => Promise<Outcome>;

/**
 * Wraps the dispatch path's `deliver` so that each outcome it answers (sent, queued, or refused
 * or failed) is published as a status record. The records of one event-loop turn leave as one
 * core-NATS message per account into the status stream (`StatusBatcher`): fire-and-forget, so
 * the dispatch never waits on the status pipeline, and nothing here can fail a dispatch (a lost
 * record costs a figure on the dashboard, never an event).
 */
export function withStatusEvents<T extends Dispatched, P>(
  batcher: Pick<StatusBatcher, 'addJson'>,
  deliver: Deliver<T, P>,
): Deliver<T, P> {
  return async (target, id, msgId, pushed) => {
    const outcome = await deliver(target, id, msgId, pushed);
    batcher.addJson(target.key.account_id, statusJson(outcome, target, id, Date.now()));
    return outcome;
  };
}

/**
 * The status record of an outcome as JSON: byte for byte `JSON.stringify` of the StatusEvent
 * literal `{ v, id, account_id, key_id, recipient, at, status, reason? }`, written as one template: every event of every
 * dispatch path writes one record, and stringifying the object was the status path's largest
 * cost (docs/benchmarks-history.md, branch i31o).
 */
export function statusJson(outcome: Outcome, target: Dispatched, id: string, at: number): string {
  const reason = reasonOf(outcome);
  return `{"v":1,"id":${str(id)},"account_id":${str(target.key.account_id)},"key_id":${str(target.key.id)},"recipient":${str(target.recipient)},"at":${at},"status":"${statusOfKind(outcome)}"${reason === undefined ? '' : `,"reason":${str(reason)}`}}`;
}

// Refusals of the request (a full queue) are outcomes too: the event was not taken, so failed.
function statusOfKind(outcome: Outcome): StatusEvent['status'] {
  return outcome.kind === 'sent' ? 'sent' : outcome.kind === 'queued' ? 'pending' : 'failed';
}

function reasonOf(outcome: Outcome): string | undefined {
  return outcome.kind === 'refused' || outcome.kind === 'failed' ? outcome.code : undefined;
}

/** Ids, account and key ids, recipients and codes are plain text: quoted as is; else escaped. */
const PLAIN = /^[\w.:@+-]*$/;

function str(value: string): string {
  return PLAIN.test(value) ? `"${value}"` : JSON.stringify(value);
}
