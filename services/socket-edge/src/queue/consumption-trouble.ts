import { ConsumerDebugEvents, ConsumerEvents, type ConsumerMessages } from 'nats';

export interface ConsumptionTrouble {
  /** `gone`: the consumer was deleted (retention reaps fully acked ones); `stalled`: consume() stopped getting messages. */
  kind: 'gone' | 'stalled';
  status: string;
  data: string;
}

/**
 * Watches a consume() run's status stream and resolves with the first reason to replace the run,
 * or undefined when the stream ends (the run was stopped). After a consumer-leader failover
 * consume() stalls until its heartbeats are missed, long after, unless restarted on the 409
 * leadership event; a fresh consume() asks the new leader.
 */
export async function nextTrouble(run: ConsumerMessages): Promise<ConsumptionTrouble | undefined> {
  for await (const status of await run.status()) {
    const data = String(status.data);
    if (
      status.type === ConsumerEvents.ConsumerDeleted ||
      status.type === ConsumerEvents.ConsumerNotFound
    ) {
      return { kind: 'gone', status: status.type, data };
    }
    const leadership =
      status.type === ConsumerDebugEvents.DebugEvent && /^409\b.*leadership/i.test(data);
    if (status.type === ConsumerEvents.HeartbeatsMissed || leadership) {
      return { kind: 'stalled', status: status.type, data };
    }
  }
  return undefined;
}
