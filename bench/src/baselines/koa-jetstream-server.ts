/**
 * BASELINE process of figure 3: koaJetStreamApp over TLS with the same certificate as Herald,
 * one nats.js connection (the services' client settings). The load generator creates KOA_STREAM
 * (the queue stream's configuration under another name) before it drives the figure.
 */
import { connect } from 'nats';
import { baselineEnv, createTlsServer, exitOnSignal, listening } from './http-util.js';
import { koaJetStreamApp } from './koa-jetstream-app.js';

const env = baselineEnv();
if (!env.natsUrl) throw new Error('NATS_URL is required (the bench runner sets it)');
const nc = await connect({
  servers: env.natsUrl,
  ...env.natsLogin,
  name: 'bench-koa-jetstream',
  noAsyncTraces: true,
});
const server = createTlsServer(env, koaJetStreamApp(nc.jetstream()).callback());
await listening(server, env);
exitOnSignal(() => {
  server.close();
  void nc.close();
});
