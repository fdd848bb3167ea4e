import https from 'node:https';
import tls from 'node:tls';

/**
 * The load generator's TLS client setup, built once: trusting the run's CA through one shared
 * secure context. Passing `ca` per connection would build a new context (parse the PEM, fill an
 * X509 store) for every handshake, which measured as half the client's cost of a connect here.
 * Every fleet uses it, so the servers see the same handshakes.
 */
export interface ClientTls {
  ca: string;
  secureContext: tls.SecureContext;
  /** For clients that take an agent rather than TLS options (socket.io-client). */
  agent: https.Agent;
}

export function clientTls(ca: string): ClientTls {
  const secureContext = tls.createSecureContext({ ca });
  return {
    ca,
    secureContext,
    agent: new https.Agent({
      secureContext,
      keepAlive: false,
      maxSockets: Number.POSITIVE_INFINITY,
    }),
  };
}
