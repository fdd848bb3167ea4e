/**
 * BASELINE: the floor of figure 1. A NATS responder that answers every request on `bench.echo`
 * with its data: the round trip every Herald live push includes (ingress → NATS → edge → NATS).
 */
import { connect } from 'nats';
import { ECHO_SUBJECT } from './names.js';

const url = process.env.NATS_URL;
if (!url) throw new Error('NATS_URL is required (the bench runner sets it)');
const login = process.env.NATS_USER
  ? { user: process.env.NATS_USER, pass: process.env.NATS_PASSWORD ?? '' }
  : {};
const nc = await connect({
  servers: url,
  ...login,
  name: 'bench-nats-responder',
  noAsyncTraces: true,
});
nc.subscribe(ECHO_SUBJECT, { callback: (_err, msg) => msg.respond(msg.data) });
await nc.flush();
process.stdout.write('ready\n');

const stop = () => {
  void nc.close().then(() => process.exit(0));
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
