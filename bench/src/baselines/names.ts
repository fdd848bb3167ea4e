/** Names the baseline processes and the load generator share. */
export const ECHO_SUBJECT = 'bench.echo';
/** The baseline JetStream stream of figure 3: HERALD_QUEUE's configuration under another name. */
export const RAW_STREAM = 'BENCH_RAW';
export const RAW_SUBJECTS = 'bench.raw.>';
export const rawSubject = (recipient: string) => `bench.raw.${recipient}`;
/** The koa + JetStream baseline's stream of figure 3: HERALD_QUEUE's configuration under another name. */
export const KOA_STREAM = 'BENCH_KOA';
export const KOA_SUBJECTS = 'bench.koa.>';
export const koaSubject = (recipient: string) => `bench.koa.${recipient}`;
/** The design floor of figure 2 (design-floor-relay.ts): its NATS dispatch subject, like rt.dispatch. */
export const FLOOR_DISPATCH_SUBJECT = 'bench.floor.dispatch';
/** The raw ws server's push subjects, one per recipient, like the edge's; it listens on the wildcard. */
export const FLOOR_PUSH_SUBJECTS = 'bench.floor.push.*';
export const floorPushSubject = (recipient: string) => `bench.floor.push.${recipient}`;
/** The raw ws server's reply once the frame is written; anything else means no socket. */
export const FLOOR_SENT = 'sent';
export const FLOOR_OFFLINE = 'offline';
