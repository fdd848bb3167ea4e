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
